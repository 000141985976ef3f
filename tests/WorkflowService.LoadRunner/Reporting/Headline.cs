using System.Globalization;
using WorkflowService.LoadRunner.Scenarios;

namespace WorkflowService.LoadRunner.Reporting;

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
    /// <summary>Service and database CPU per workflow at sustained (ms), and PostgreSQL commits and rows per workflow.</summary>
    public PerWorkflow? SustainedCost { get; init; }

    /// <summary>Sustained throughput of the Rebus saga peer in the same run.</summary>
    public double? PeerSustained { get; init; }

    /// <summary>The Rebus peer's cost per workflow in the same run, beside ours: commits and rows do not drift with the machine.</summary>
    public PerWorkflow? PeerSustainedCost { get; init; }

    /// <summary>Seconds to 80 % of warm throughput after a cold start, as shipped (ReadyToRun).</summary>
    public double? ColdStartSeconds { get; init; }

    /// <summary>long-instance: first/last p99 of one instance's ticks, and of many instances' ticks (1 when cost does not grow).</summary>
    public (double? One, double? Many) LongInstance { get; init; }

    /// <summary>large-definition: the first diagram of the 300-step definition (ms).</summary>
    public double? Diagram300Ms { get; init; }

    public double? UsToPeer => Sustained / PeerSustained;

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
            report.Scenarios.Where(s => s.OtherLoadPercent >= ScenarioResult.DisturbedPercent).Select(s => s.Scenario).ToHashSet())
        {
            SustainedCost = report.Find(ScenarioCatalog.Sustained) is { Failures: 0 } sustained ? PerWorkflow.Of(sustained) : null,
            PeerSustained = Throughput(PeerRebusScenario.Family + "-sustained"),
            PeerSustainedCost = report.Find(PeerRebusScenario.Family + "-sustained") is { Failures: 0 } peer ? PerWorkflow.Of(peer) : null,
            ColdStartSeconds = Figure(report, ScenarioCatalog.ColdStart, "ReadyToRun: seconds to 80 % of warm (median)"),
            LongInstance = (Inverse(Figure(report, ScenarioCatalog.LongInstance, "one instance: last/first p99")),
                Inverse(Figure(report, ScenarioCatalog.LongInstance, report.Find(ScenarioCatalog.LongInstance)?.Figures.Keys
                    .FirstOrDefault(k => k.EndsWith(" instances: last/first p99", StringComparison.Ordinal)) ?? "-"))),
            Diagram300Ms = Figure(report, ScenarioCatalog.LargeDefinition, "300." + LargeDefinitionScenario.Diagram + "Ms"),
        };
    }

    private static double? Inverse(double? value) => value is > 0 ? Math.Round(1 / value.Value, 2) : null;

    private static double? Figure(RunReport report, string scenario, string figure) =>
        report.Find(scenario) is { Correct: true } result && result.Figures.TryGetValue(figure, out var value) ? value : null;

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
        yield return ("service / database CPU per workflow (sustained)", "≤ 0.40 ms / ≤ 0.45 ms (PostgreSQL)",
            Mark(Pair(SustainedCost?.ServiceCpuMs, SustainedCost?.DatabaseCpuMs, "ms"), ScenarioCatalog.Sustained));
        yield return ("commits / rows written per workflow (sustained)", "≤ 2.2 commits (PostgreSQL)",
            Pair(SustainedCost?.Commits, SustainedCost?.RowsWritten, string.Empty).TrimEnd());
        yield return ("peer-rebus commits / rows written per workflow (sustained, same run)", "—",
            Pair(PeerSustainedCost?.Commits, PeerSustainedCost?.RowsWritten, string.Empty).TrimEnd());
        yield return ("engine / ceiling (single run; interleaved ratios: the ceiling report)", "≥ 0.7", Mark(Ratio(EngineToCeiling), ScenarioCatalog.Sustained, ScenarioCatalog.Ceiling));
        yield return ("table-growth / sustained (single run)", "≥ 0.9", Mark(Ratio(TableGrowthToSustained), ScenarioCatalog.TableGrowth, ScenarioCatalog.Sustained));
        yield return ("us / peer-rebus, sustained (same run)", "≥ 5×", UsToPeer is { } peer ? peer.ToString("0.0", CultureInfo.InvariantCulture) + "×" : "—");
        yield return ("long-instance: first / last p99, one instance / many", "≥ 0.9",
            Pair(LongInstance.One, LongInstance.Many, string.Empty).TrimEnd());
        yield return ("cold-start: seconds to 80 % of warm, ReadyToRun as shipped", "≤ 10 s", ColdStartSeconds is { } cold ? cold.ToString("0.#", CultureInfo.InvariantCulture) + " s" : "—");
        yield return ("large-definition: first diagram of 300 steps", "< 1 s", Diagram300Ms is { } diagram ? (diagram / 1000).ToString("0.00", CultureInfo.InvariantCulture) + " s" : "—");
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

/// <summary>What one workflow of a scenario cost: CPU of the service and the database, and PostgreSQL's commits and rows.</summary>
internal sealed record PerWorkflow(double? ServiceCpuMs, double? DatabaseCpuMs, double? Commits, double? RowsWritten)
{
    public static PerWorkflow Of(ScenarioResult result)
    {
        var ops = (double)result.Ops;
        double? Count(params string[] names) => result.CounterOps > 0 && names.All(result.Counters.ContainsKey)
            ? Math.Round(names.Sum(n => result.Counters[n]) / (double)result.CounterOps, 2)
            : null;
        return new PerWorkflow(
            result.ServiceCpuSeconds is { } service ? Math.Round(service * 1000 / ops, 2) : null,
            result.DatabaseServerCpuSeconds is { } database ? Math.Round(database * 1000 / ops, 2) : null,
            Count("commits"),
            Count("rows inserted", "rows updated", "rows deleted"));
    }
}
