using System.Globalization;
using System.Text.Json;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Pools interleave reports (their JSON): a variant's paired ratio to a baseline over the rounds of every report, with the
/// interval <see cref="InterleavedRun"/> gives one report (its processes resampled, then their rounds; each report's
/// processes its own), and the median differences of CPU and WAL. One run's interval is wide; several runs of the same
/// builds, pooled, see a smaller difference.
/// </summary>
internal static class InterleavePool
{
    /// <summary>The pooled comparison; null when no report has a round with both variants.</summary>
    public sealed record Result(double Ratio, double Low, double High, int Pairs, int Processes, double ServiceMs, double DatabaseMs,
        double MachineMs, double? WalBytes, double LowestProcess, double HighestProcess);

    private sealed record Pair((int Report, int Process) Process, double Ratio, double ServiceMs, double DatabaseMs, double MachineMs, double? WalBytes);

    /// <summary>
    /// Pools <paramref name="reports"/> (the text of each report's JSON, read as the report wrote its windows). A text that
    /// is not JSON throws <see cref="JsonException"/>; JSON that is no interleave report, <see cref="FormatException"/>.
    /// </summary>
    public static Result? Compute(string variant, string baseline, IReadOnlyList<string> reports)
    {
        ArgumentNullException.ThrowIfNull(reports);
        var pairs = new List<Pair>();
        for (var r = 0; r < reports.Count; r++)
        {
            var windows = JsonSerializer.Deserialize<Report>(reports[r], InterleavedRun.ReportJson)?.Windows
                ?? throw new FormatException($"report {r + 1} is not an interleave report: it has no windows");
            foreach (var a in windows.Where(w => w.Variant == variant))
            {
                if (windows.FirstOrDefault(w => w.Variant == baseline && w.Round == a.Round) is not { } b)
                {
                    continue;
                }

                // A report written before --restarts has no process: one process, its own.
                pairs.Add(new Pair((r, a.Process), a.OpsPerSecond / b.OpsPerSecond, a.ServiceCpuMsPerOp - b.ServiceCpuMsPerOp,
                    a.DatabaseCpuMsPerOp - b.DatabaseCpuMsPerOp, a.MachineCpuMsPerOp - b.MachineCpuMsPerOp, a.WalBytesPerOp - b.WalBytesPerOp));
            }
        }

        if (pairs.Count == 0)
        {
            return null;
        }

        var processes = pairs.GroupBy(p => p.Process).Select(g => g.Select(p => p.Ratio).ToList()).ToList();
        var (low, high) = InterleavedRun.MedianInterval(processes);
        var walBytes = pairs.Select(p => p.WalBytes).OfType<double>().ToList();
        return new Result(AlternatingWindows.Median(pairs.Select(p => p.Ratio)), low, high, pairs.Count, processes.Count,
            AlternatingWindows.Median(pairs.Select(p => p.ServiceMs)), AlternatingWindows.Median(pairs.Select(p => p.DatabaseMs)),
            AlternatingWindows.Median(pairs.Select(p => p.MachineMs)), walBytes.Count > 0 ? AlternatingWindows.Median(walBytes) : null,
            processes.Min(AlternatingWindows.Median), processes.Max(AlternatingWindows.Median));
    }

    /// <summary>What pooling reads of a report: its windows, as <see cref="InterleavedRun"/> wrote them.</summary>
    private sealed record Report(IReadOnlyList<InterleavedRun.Window>? Windows);

    /// <summary>A Markdown table of the pooled comparison, as the interleave report's paired table reads.</summary>
    public static string Markdown(string variant, string baseline, Result result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return string.Create(CultureInfo.InvariantCulture, $"""
            | {variant} vs {baseline}, pooled | ops/s ratio, median | 95 % interval | pairs | processes (min … max) | service CPU ms/op | database CPU ms/op | machine CPU ms/op | WAL bytes/op |
            | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |
            | {variant} | {result.Ratio:P1} | {result.Low:P1} … {result.High:P1} | {result.Pairs} | {result.Processes} ({result.LowestProcess:P1} … {result.HighestProcess:P1}) | {result.ServiceMs:+0.000;-0.000;0.000} | {result.DatabaseMs:+0.000;-0.000;0.000} | {result.MachineMs:+0.000;-0.000;0.000} | {(result.WalBytes is { } wal ? wal.ToString("+#,0;-#,0;0", CultureInfo.InvariantCulture) : "–")} |

            """);
    }
}
