using System.Text.Json.Nodes;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

/// <summary>
/// Redocly CLI's recommended rules over the OpenAPI document the service serves (tests/tools/redocly.yaml): no errors, and
/// no warning other than those the configuration keeps with their reason.
/// </summary>
public sealed class OpenApiLintTests : SharedServiceTest<SqliteBackend>
{
    /// <summary>The rules tests/tools/redocly.yaml lowers to a warning, each with its reason there.</summary>
    private static readonly string[] JustifiedWarnings = ["no-server-example.com"];

    [Fact]
    public async Task Served_document_passes_redocly_recommended_rules_without_errors()
    {
        var redocly = ExternalTools.Npm("redocly");
        var work = Directory.CreateTempSubdirectory("workflow-openapi-lint-");
        try
        {
            var document = Path.Combine(work.FullName, "openapi.json");
            await File.WriteAllTextAsync(document, await Api.Http.GetStringAsync("/openapi/v1.json"));

            var lint = await ExternalTools.RunAsync(redocly,
                ["lint", document, "--config", Path.Combine(ExternalTools.NpmProject, "redocly.yaml"), "--format", "json"],
                ExternalTools.NpmProject, TimeSpan.FromMinutes(3));

            var json = lint.Output.IndexOf('{', StringComparison.Ordinal);
            Assert.True(json >= 0, $"redocly printed no JSON report: {lint}");
            var report = JsonNode.Parse(lint.Output[json..])!;
            var problems = report["problems"]!.AsArray()
                .Select(p => (Rule: (string)p!["ruleId"]!, Severity: (string)p["severity"]!, Message: (string)p["message"]!,
                    Where: (string?)p["location"]?[0]?["pointer"]))
                .ToList();
            var unexpected = problems.Where(p => p.Severity == "error" || !JustifiedWarnings.Contains(p.Rule)).ToList();
            Assert.True(unexpected.Count == 0,
                string.Join(Environment.NewLine, unexpected.Select(p => $"{p.Severity} {p.Rule} at {p.Where}: {p.Message}")));
            Assert.Equal(0, (int)report["totals"]!["errors"]!);
            Assert.Equal(0, lint.ExitCode);
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }
}
