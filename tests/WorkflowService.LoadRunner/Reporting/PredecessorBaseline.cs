using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Reporting;

/// <summary>
/// The predecessor engine's published figures (Oracle AQ and MongoDB, 2026-03-17), transcribed from
/// shared/reference into docs/benchmarks/predecessor-baselines-2026-03-17.json.
/// </summary>
[SuppressMessage("Performance", "CA1812:Avoid uninstantiated internal classes", Justification = "Instantiated by System.Text.Json from the baseline file.")]
internal sealed record PredecessorBaseline(string Source, string Date, List<PredecessorBaseline.Engine> Engines)
{
    public const string FileName = "predecessor-baselines-2026-03-17.json";

    public static PredecessorBaseline Load(string directory) =>
        JsonSerializer.Deserialize<PredecessorBaseline>(File.ReadAllText(Path.Combine(directory, FileName)), ReportStore.JsonOptions)!;

    [SuppressMessage("Performance", "CA1812:Avoid uninstantiated internal classes", Justification = "Instantiated by System.Text.Json from the baseline file.")]
    internal sealed record Engine(string Name, string Description, List<Row> Scenarios, Dictionary<string, Dictionary<string, PhaseFigures>> Phases)
    {
        public Row? Find(string scenario) => Scenarios.FirstOrDefault(s => s.Scenario == scenario);
    }

    [SuppressMessage("Performance", "CA1812:Avoid uninstantiated internal classes", Justification = "Instantiated by System.Text.Json from the baseline file.")]
    internal sealed record Row(string Scenario, string PredecessorName, string Tier, int Ops, int Concurrency,
        double DurationMs, double ThroughputPerSecond, double AvgMs, double P95Ms, double MaxMs);

    [SuppressMessage("Performance", "CA1812:Avoid uninstantiated internal classes", Justification = "Instantiated by System.Text.Json from the baseline file.")]
    internal sealed record PhaseFigures(double AvgMs, double P95Ms, double MaxMs);
}
