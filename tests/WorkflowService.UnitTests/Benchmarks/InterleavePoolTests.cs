using System.Text.Json;
using WorkflowService.LoadRunner.Scenarios;

namespace WorkflowService.UnitTests.Benchmarks;

/// <summary>
/// Pooling interleave reports: each round's ratio of the variant to the baseline, from every report, with each report's
/// processes kept apart; a report that is not an interleave report is refused.
/// </summary>
public sealed class InterleavePoolTests
{
    private static string Report(params (string Variant, int Round, int Process, double OpsPerSecond, double ServiceMs, int? Wal)[] windows) =>
        JsonSerializer.Serialize(new
        {
            windows = windows.Select(w => new
            {
                variant = w.Variant, round = w.Round, process = w.Process, opsPerSecond = w.OpsPerSecond,
                serviceCpuMsPerOp = w.ServiceMs, databaseCpuMsPerOp = 0.4, machineCpuMsPerOp = 1.1, walBytesPerOp = w.Wal,
            }),
        });

    [Fact]
    public void Rounds_of_every_report_are_paired_within_their_round_and_pooled()
    {
        var first = Report(("off", 1, 1, 1000, 0.50, 4000), ("paths", 1, 1, 900, 0.55, 4800),
            ("off", 2, 1, 1000, 0.50, 4000), ("paths", 2, 1, 950, 0.53, 4800));
        // The second report's process 1 is another process than the first's.
        var second = Report(("paths", 1, 1, 960, 0.52, 4900), ("off", 1, 1, 1000, 0.50, 4000), ("other", 1, 1, 10, 9, null));

        var result = InterleavePool.Compute("paths", "off", [first, second])!;

        Assert.Equal(0.95, result.Ratio, 6);
        Assert.Equal(3, result.Pairs);
        Assert.Equal(2, result.Processes);
        Assert.Equal(0.03, result.ServiceMs, 6);
        Assert.Equal(0.0, result.DatabaseMs, 6);
        Assert.Equal(800, result.WalBytes);
        Assert.InRange(result.Low, 0.9, result.Ratio);
        Assert.InRange(result.High, result.Ratio, 0.96);
        Assert.Equal(0.925, result.LowestProcess, 6);
        Assert.Equal(0.96, result.HighestProcess, 6);
        Assert.Contains("| paths | 95.0 % |", InterleavePool.Markdown("paths", "off", result), StringComparison.Ordinal);
    }

    [Fact]
    public void Reports_without_a_round_of_both_pool_to_nothing_and_other_reports_are_refused()
    {
        Assert.Null(InterleavePool.Compute("paths", "off", [Report(("off", 1, 1, 1000, 0.5, null), ("paths", 2, 1, 900, 0.5, null))]));
        Assert.Throws<FormatException>(() => InterleavePool.Compute("paths", "off", ["""{"scenarios":[]}"""]));
        Assert.ThrowsAny<JsonException>(() => InterleavePool.Compute("paths", "off", ["not json"]));
    }
}
