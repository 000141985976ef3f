using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Reporting;

/// <summary>Writes a run's .json and .md side by side, and finds the latest full run of each backend.</summary>
internal static partial class ReportStore
{
    public static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    public static (string Json, string Markdown) Save(RunReport report, string directory, string suffix)
    {
        Directory.CreateDirectory(directory);
        var stem = Path.Combine(directory, $"{report.Backend}-{report.Date}{suffix}");
        File.WriteAllText(stem + ".json", JsonSerializer.Serialize(report, JsonOptions) + "\n");
        File.WriteAllText(stem + ".md", MarkdownReport.Render(report));
        return (stem + ".json", stem + ".md");
    }

    /// <summary>The newest full report (docs/benchmarks/&lt;backend&gt;-&lt;yyyy-MM-dd&gt;.json, no tier suffix) of every backend.</summary>
    public static IReadOnlyList<RunReport> LatestFullReports(string directory) =>
        Directory.Exists(directory)
            ? Directory.EnumerateFiles(directory, "*.json")
                .Select(f => (File: f, Match: FullReportName().Match(Path.GetFileName(f))))
                .Where(x => x.Match.Success)
                .GroupBy(x => x.Match.Groups["backend"].Value)
                .Select(g => g.MaxBy(x => x.Match.Groups["date"].Value).File)
                .Select(f => JsonSerializer.Deserialize<RunReport>(File.ReadAllText(f), JsonOptions)!)
                .OrderBy(r => r.Backend == "sqlite" ? 0 : 1).ThenBy(r => r.Backend, StringComparer.Ordinal)
                .ToList()
            : [];

    [GeneratedRegex(@"^(?<backend>sqlite|postgres)-(?<date>\d{4}-\d{2}-\d{2})\.json$")]
    private static partial Regex FullReportName();
}
