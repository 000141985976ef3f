using System.Text.Json;
using System.Text.Json.Nodes;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Client;

/// <summary>
/// The second generated client: TypeScript types made by openapi-typescript from the document a running service serves,
/// compiled with tsc --strict together with tests/tools/walkthrough/walkthrough.ts (the README walkthrough through
/// openapi-fetch), which then runs against that service.
/// </summary>
public sealed class TypeScriptClientTests
{
    internal static readonly TimeSpan ToolTimeout = TimeSpan.FromMinutes(3);

    internal static string Walkthrough => Path.Combine(ExternalTools.NpmProject, "walkthrough");

    [Fact]
    public async Task Generated_typescript_client_compiles_strictly_and_runs_the_readme_walkthrough()
    {
        var tsc = ExternalTools.Npm("tsc");
        var tsx = ExternalTools.Npm("tsx");
        await using var database = await new SqliteBackend().CreateDatabaseAsync();
        await using var node = await TestServiceProcess.StartAsync("typescript-client", database.Settings);
        using var http = node.CreateClient();
        var work = Directory.CreateTempSubdirectory("workflow-typescript-client-");
        try
        {
            var types = await GenerateTypesAsync(http, work.FullName);

            var compiled = await ExternalTools.RunAsync(tsc,
                ["-p", await WriteTsConfigAsync(work.FullName, types, Path.Combine(Walkthrough, "walkthrough.ts")), "--strict", "--noEmit"],
                ExternalTools.NpmProject, ToolTimeout);
            Assert.True(compiled.ExitCode == 0, $"tsc --strict reports errors in the generated client or the walkthrough: {compiled}");

            var run = await ExternalTools.RunAsync(tsx, [Path.Combine(Walkthrough, "walkthrough.ts")], ExternalTools.NpmProject, ToolTimeout,
                new Dictionary<string, string?> { ["WORKFLOW_URL"] = node.Address.ToString().TrimEnd('/'), ["WORKFLOW_API_KEY"] = node.ApiKey });
            Assert.True(run.ExitCode == 0, $"the walkthrough failed: {run}");

            // Read back through the API what the script says it made.
            var last = run.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)[^1];
            var id = (string?)JsonNode.Parse(last)?["instanceId"] ?? throw new InvalidOperationException($"no instance id in: {run.Output}");
            using var answer = await http.GetAsync($"/instances/{id}");
            var body = await answer.Content.ReadAsStringAsync();
            Assert.True(answer.IsSuccessStatusCode, $"GET /instances/{id} answered {answer.StatusCode}: {body}");
            var instance = JsonDocument.Parse(body).RootElement;
            Assert.Equal("Completed", instance.GetProperty("status").GetString());
            Assert.Equal("signal-roundtrip", instance.GetProperty("definition").GetString());
            Assert.Equal(7, instance.GetProperty("output").GetProperty("result").GetProperty("value").GetInt32());
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    /// <summary>openapi-typescript's types for the document <paramref name="http"/>'s service serves, written into <paramref name="folder"/>.</summary>
    internal static async Task<string> GenerateTypesAsync(HttpClient http, string folder)
    {
        var generator = ExternalTools.Npm("openapi-typescript");
        var document = Path.Combine(folder, "openapi.json");
        await File.WriteAllTextAsync(document, await http.GetStringAsync("/openapi/v1.json"));
        var types = Path.Combine(folder, "workflow-service.d.ts");
        var generated = await ExternalTools.RunAsync(generator, [document, "--output", types], ExternalTools.NpmProject, ToolTimeout);
        Assert.True(generated.ExitCode == 0 && File.Exists(types), $"openapi-typescript failed: {generated}");
        return types;
    }

    /// <summary>The walkthrough's tsconfig.json for <paramref name="sources"/>, with its generated types taken from <paramref name="types"/>.</summary>
    internal static async Task<string> WriteTsConfigAsync(string folder, string types, params string[] sources)
    {
        var config = new JsonObject
        {
            ["extends"] = Path.Combine(Walkthrough, "tsconfig.json"),
            ["compilerOptions"] = new JsonObject
            {
                ["paths"] = new JsonObject { ["workflow-service-openapi"] = new JsonArray(types) },
            },
            ["files"] = new JsonArray([.. sources.Select(s => (JsonNode)s), Path.Combine(Walkthrough, "node.d.ts"), types]),
        };
        var path = Path.Combine(folder, "tsconfig.json");
        await File.WriteAllTextAsync(path, config.ToJsonString());
        return path;
    }
}
