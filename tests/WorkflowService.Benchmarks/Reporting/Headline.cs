using System.Globalization;
using WorkflowService.Benchmarks.Scenarios;

namespace WorkflowService.Benchmarks.Reporting;

/// <summary>The figures BENCHMARKS.md sets targets for, computed from one run's report.</summary>
internal sealed record Headline(
    LatencySummary? Serial,
    LatencySummary? Serial1K,
    LatencySummary? SerialSignalToCompletion,
    double? ThroughputParallel,
    double? Sustained,
    LatencySummary? SustainedLatency,
    double? Ceiling,
    double? TableGrowth,
    long? SustainedPeakBytes,
    long? TableGrowthPeakBytes,
    double? IdleQueriesPerSecond,
    bool IdleDerived,
    IReadOnlySet<string> Disturbed)
{
    public double? EngineToCeiling => Sustained / Ceiling;
    public double? TableGrowthToSustained => TableGrowth / Sustained;

    public static Headline From(RunReport report)
    {
        double? Throughput(string name) => report.Find(name) is { Failures: 0 } s ? s.ThroughputPerSecond : null;
        var serial1K = report.Find(ScenarioCatalog.LatencySerial1K);
        var serial = report.Find(ScenarioCatalog.LatencySerial);
        return new Headline(
            serial?.Latency,
            serial1K?.Latency,
            (serial1K ?? serial)?.Phases.GetValueOrDefault(Phases.SignalToCompletion),
            Throughput(ScenarioCatalog.ThroughputParallel),
            Throughput(ScenarioCatalog.Sustained),
            report.Find(ScenarioCatalog.Sustained)?.Latency,
            Throughput(ScenarioCatalog.Ceiling),
            Throughput(ScenarioCatalog.TableGrowth),
            report.Find(ScenarioCatalog.Sustained)?.ServicePeakWorkingSetBytes,
            report.Find(ScenarioCatalog.TableGrowth)?.ServicePeakWorkingSetBytes,
            report.Find(ScenarioCatalog.IdlePolling) is { } idle && idle.Figures.TryGetValue(IdlePollingScenario.QueriesPerSecond, out var queries) ? queries : null,
            report.Find(ScenarioCatalog.IdlePolling) is { } counted && !counted.Figures.ContainsKey(IdlePollingScenario.ServerTransactionsPerSecond),
            report.Scenarios.Where(s => s.OtherLoadPercent >= ScenarioResult.DisturbedPercent).Select(s => s.Scenario).ToHashSet());
    }

    /// <summary>(figure, target, value) rows for a Markdown table; † marks a value from a scenario other processes disturbed.</summary>
    public IEnumerable<(string Figure, string Target, string Value)> Rows()
    {
        yield return ("serial end-to-end avg / p99 (latency-serial, 16 ops)", "≤ 10 ms / ≤ 25 ms", Mark(Pair(Serial?.Avg, Serial?.P99, "ms"), ScenarioCatalog.LatencySerial));
        yield return ("serial end-to-end avg / p99 (latency-serial-1k)", "≤ 2 ms / ≤ 5 ms (PostgreSQL)", Mark(Pair(Serial1K?.Avg, Serial1K?.P99, "ms"), ScenarioCatalog.LatencySerial1K));
        yield return ("signalToCompletion p50 (serial)", "≤ 5 ms", Mark(Ms(SerialSignalToCompletion?.P50), Serial1K is null ? ScenarioCatalog.LatencySerial : ScenarioCatalog.LatencySerial1K));
        yield return ("throughput-parallel (96 ops, c16)", "—", Mark(PerSecond(ThroughputParallel), ScenarioCatalog.ThroughputParallel));
        yield return ("signal-roundtrip-sustained (10,000 ops, c64)", "PostgreSQL ≥ 2,000 ops/s (stretch 3,000); embedded ≥ 3,000",
            Mark(PerSecond(Sustained) + (SustainedLatency is { } l ? $" (p99 {l.P99.ToString("F1", CultureInfo.InvariantCulture)} ms)" : string.Empty), ScenarioCatalog.Sustained));
        yield return ("ceiling (no engine; see the round-4 ceiling report)", "—", Mark(PerSecond(Ceiling), ScenarioCatalog.Ceiling));
        yield return ("engine / ceiling", "≥ 0.7", Mark(Ratio(EngineToCeiling), ScenarioCatalog.Sustained, ScenarioCatalog.Ceiling));
        yield return ("table-growth / sustained", "≥ 0.9", Mark(Ratio(TableGrowthToSustained), ScenarioCatalog.TableGrowth, ScenarioCatalog.Sustained));
        yield return ("service peak memory: sustained / table-growth", "≤ 150 MB, no growth", Pair(Mb(SustainedPeakBytes), Mb(TableGrowthPeakBytes), "MB"));
        // Not marked when other processes were busy: an idle node's query count follows its poll interval, not the CPU.
        yield return ("idle polling per node", "≤ 10 queries/s", IdleQueriesPerSecond is { } q
            ? q.ToString("0.##", CultureInfo.InvariantCulture) + " queries/s" + (IdleDerived ? $" (idle polls × {IdlePollingScenario.StatementsPerIdlePoll})" : " (server count)")
            : "—");
    }

    private string Mark(string value, params string[] scenarios) =>
        value != "—" && Disturbed is not null && scenarios.Any(Disturbed.Contains) ? value + " †" : value;

    public static string Ms(double? value) => value is { } v ? v.ToString("F2", CultureInfo.InvariantCulture) + " ms" : "—";
    public static string PerSecond(double? value) => value is { } v ? v.ToString("N1", CultureInfo.InvariantCulture) + " ops/s" : "—";
    public static string Ratio(double? value) => value is { } v ? v.ToString("F2", CultureInfo.InvariantCulture) : "—";
    public static double? Mb(long? bytes) => bytes is { } b ? Math.Round(b / 1048576.0, 0) : null;

    private static string Pair(double? a, double? b, string unit) =>
        a is null && b is null ? "—" : $"{a?.ToString("0.##", CultureInfo.InvariantCulture) ?? "—"} / {b?.ToString("0.##", CultureInfo.InvariantCulture) ?? "—"} {unit}";
}
