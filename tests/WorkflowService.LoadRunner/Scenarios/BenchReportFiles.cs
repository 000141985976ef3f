using System.Globalization;
using System.Text.Json;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Where a one-figure command (<c>schedules</c>, <c>foreach</c>) writes its report: &lt;output&gt;/&lt;name&gt;-&lt;backend&gt;-&lt;date&gt;.md
/// and .json, the JSON with the machine and the commit measured.
/// </summary>
internal static class BenchReportFiles
{
    private static readonly JsonSerializerOptions ReportJson = new(JsonSerializerDefaults.Web) { WriteIndented = true };

    public static (string Markdown, string Json) Save(RunnerOptions options, string name, string backend, DateTimeOffset started, object figures, string markdown)
    {
        Directory.CreateDirectory(options.OutputDirectory);
        var stem = Path.Combine(options.OutputDirectory, string.Create(CultureInfo.InvariantCulture, $"{name}-{backend}-{started:yyyy-MM-dd}"));
        File.WriteAllText(stem + ".json", JsonSerializer.Serialize(
            new { backend, started, command = CommandLine, machine = MachineFacts.Read(options.RepositoryRoot), figures }, ReportJson));
        File.WriteAllText(stem + ".md", markdown);
        return (stem + ".md", stem + ".json");
    }

    /// <summary>The command that repeats the run, as the report quotes it.</summary>
    public static string CommandLine => "dotnet run -c Release --project tests/WorkflowService.Benchmarks -- " + string.Join(' ', Environment.GetCommandLineArgs().Skip(1));
}
