using System.Diagnostics;
using System.Globalization;
using System.Text;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Schedules, measured (the <c>schedules</c> command, issue #39). Firing: many schedules firing every minute on one node,
/// all on the minute (the hard case: every occurrence due at once) or staggered over the minute's seconds; each
/// occurrence's fire delay is the instance's creation time minus its occurrence's time, both read from the store (the
/// creation on the store's clock, the occurrence from the idempotency key). Key against id: one node, windows of the
/// signal round trip taken in turns (<see cref="AlternatingWindows"/>), the signal and the long-poll addressed by
/// instance id in one variant and by definition and business key in the other.
/// </summary>
internal sealed class SchedulesBenchmark(RunnerOptions options, string backendName)
{
    public const string OnTheMinute = "on-the-minute";
    public const string Staggered = "staggered";

    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/bench-scheduled.json";
    private const string Definition = "bench-scheduled";
    private const string ById = "by-id";
    private const string ByKey = "by-key";
    private const int CreateConcurrency = 16;
    private const int RoundtripConcurrency = 16;
    private const int WarmUpOps = 500;

    /// <summary>How long after the last measured occurrence's time the run waits for it to start before it counts it missing.</summary>
    private static readonly TimeSpan Drain = TimeSpan.FromMinutes(2);

    private readonly BenchApiKey _apiKey = BenchApiKey.Create();

    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        var work = Path.Combine(Path.GetTempPath(), $"wf-schedules-{backendName}-{started:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        Console.WriteLine($"{backendName}: schedules benchmark; logs in {work}");
        var firings = new List<FiringResult>();
        foreach (var spread in options.ScheduleSpreads)
        {
            firings.Add(await FiringAsync(spread, Path.Combine(work, spread), cancellationToken));
        }

        var windows = await KeyVsIdAsync(Path.Combine(work, "key-vs-id"), cancellationToken);
        var (markdown, json) = BenchReportFiles.Save(options, "schedules", backendName, started, new { firings, keyVsId = windows }, Render(firings, windows, started));
        Console.WriteLine($"{backendName}: wrote {markdown} and {json}");
        return firings.All(f => f.Missing == 0 && f.Duplicated == 0) && windows.All(w => w.Failures == 0);
    }

    /// <summary>The schedules of one spread on a fresh node: a warm-up minute, then the measured minutes, read from the store.</summary>
    private async Task<FiringResult> FiringAsync(string spread, string work, CancellationToken cancellationToken)
    {
        var count = options.ScheduleCount;
        var settings = new Dictionary<string, string>
        {
            ["Schedules__MaxSchedulesPerTenant"] = count.ToString(CultureInfo.InvariantCulture),
        };
        await using var node = await BenchNode.StartAsync(options, backendName, _apiKey, work, CreateConcurrency, settings, [DefinitionFile], cancellationToken);
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, CreateConcurrency).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < count)
            {
                await node.Client.CreateScheduleAsync(new
                {
                    name = string.Create(CultureInfo.InvariantCulture, $"bench-{i:D5}"),
                    definition = Definition,
                    // Six fields, seconds first: schedule i at second i*60/count of every minute when staggered.
                    cron = spread == OnTheMinute ? "* * * * *" : string.Create(CultureInfo.InvariantCulture, $"{i * 60 / count} * * * * *"),
                    input = new { i },
                }, cancellationToken);
            }
        }));

        // The first whole minute warms the node (JIT, pools); the measured minutes follow it.
        var warmUp = NextMinute(DateTimeOffset.UtcNow.AddSeconds(5));
        var from = warmUp.AddMinutes(1);
        var to = from.AddMinutes(options.ScheduleMinutes);
        var expected = count * options.ScheduleMinutes;
        Console.WriteLine($"  {spread}: {count:N0} schedules created; warm-up minute {warmUp:HH:mm}, measuring {from:HH:mm} to {to:HH:mm} ({expected:N0} occurrences)");
        await DelayUntilAsync(from, cancellationToken);
        var cpuBefore = ResourceProbe.Read(node.Service!.Pid);
        await DelayUntilAsync(to, cancellationToken);
        var cpuAfter = ResourceProbe.Read(node.Service!.Pid);

        await using var store = await node.Backend.OpenStoreReaderAsync(cancellationToken);
        List<ScheduledStart> measured;
        var waited = Stopwatch.StartNew();
        while (true)
        {
            // Until the last measured minute's occurrences have all started, or the drain ends.
            measured = [.. (await store.ReadScheduledStartsAsync(cancellationToken)).Where(s => s.FireMs >= from.ToUnixTimeMilliseconds() && s.FireMs < to.ToUnixTimeMilliseconds())];
            if (measured.Count >= expected || waited.Elapsed > Drain)
            {
                break;
            }

            await Task.Delay(TimeSpan.FromSeconds(1), cancellationToken);
        }

        var distinct = measured.Select(s => (s.ScheduleId, s.FireMs)).Distinct().Count();
        var delays = LatencySummary.From(measured.Select(s => s.Delay.TotalMilliseconds))!;
        // Each minute's occurrences from their time to the last one's start: the rate the node works a burst off at.
        var minutes = measured.GroupBy(s => s.FireMs / 60_000).Select(m => new MinuteFigures(
            DateTimeOffset.FromUnixTimeMilliseconds(m.Key * 60_000).ToString("HH:mm", CultureInfo.InvariantCulture), m.Count(),
            Math.Round(m.Max(s => s.Delay.TotalSeconds), 2), Math.Round(m.Count() / Math.Max(0.001, (new DateTimeOffset(m.Max(s => s.CreatedAt)) - DateTimeOffset.FromUnixTimeMilliseconds(m.Min(s => s.FireMs))).TotalSeconds), 1)))
            .OrderBy(m => m.Minute, StringComparer.Ordinal).ToList();
        var result = new FiringResult(spread, count, options.ScheduleMinutes, expected, distinct, Math.Max(0, expected - distinct), measured.Count - distinct,
            Math.Round(measured.Count / (to - from).TotalSeconds, 1), Math.Round(AlternatingWindows.Median(minutes.Select(m => m.BurstPerSecond)), 1), delays,
            Math.Round((cpuAfter.ServiceCpuSeconds - cpuBefore.ServiceCpuSeconds) * 1000 / Math.Max(1, measured.Count), 3), minutes);
        Console.WriteLine($"    {distinct:N0} of {expected:N0} started, {result.Duplicated} twice; {result.PerSecond:N1}/s over the run, bursts worked off at {result.BurstPerSecond:N1}/s; fire delay p50 {delays.P50:N0} ms, p99 {delays.P99:N0} ms, max {delays.Max:N0} ms");
        return result;
    }

    /// <summary>Windows of signal round trips, by id and by business key in turns, on one node.</summary>
    private async Task<List<KeyWindow>> KeyVsIdAsync(string work, CancellationToken cancellationToken)
    {
        await using var node = await BenchNode.StartAsync(options, backendName, _apiKey, work, RoundtripConcurrency, new Dictionary<string, string>(),
            ["docs/examples/signal-roundtrip.json"], cancellationToken);
        var context = new ScenarioContext
        {
            Backend = node.Backend, Options = options, Cancellation = cancellationToken, Client = node.Client,
            Progress = new ProgressMeter($"{backendName}-key-vs-id", options.WindowOps * options.Windows * 2, node.Service!.Pid),
        };
        await using var progress = context.Progress;
        var run = Guid.NewGuid().ToString("N")[..8];
        foreach (var variant in new[] { ById, ByKey })
        {
            await ClosedLoopScenario.RunLoopAsync(context, WarmUpOps, RoundtripConcurrency, i => -1 - i, record: false,
                i => RoundtripAsync(node.Client, variant, $"{run}-warm-{variant}-{i}", i, cancellationToken));
        }

        var windows = new List<KeyWindow>();
        foreach (var (round, variant) in AlternatingWindows.Turns([ById, ByKey], options.Windows))
        {
            var clock = Stopwatch.StartNew();
            var samples = await ClosedLoopScenario.RunLoopAsync(context, options.WindowOps, RoundtripConcurrency, i => i, record: true,
                i => RoundtripAsync(node.Client, variant, $"{run}-{round}-{variant}-{i}", i, cancellationToken));
            LatencySummary Phase(Func<OperationSample, double> of) => LatencySummary.From(samples.Select(of))!;
            double Of(OperationSample s, string phase) => s.Phases.GetValueOrDefault(phase, double.NaN);
            var window = new KeyWindow(round, variant, samples.Length, Math.Round(samples.Length / clock.Elapsed.TotalSeconds, 1), Phase(s => s.EndToEndMs),
                Phase(s => Of(s, Phases.SignalPublish) + Of(s, Phases.SignalToCompletion)), Phase(s => Of(s, Phases.SignalPublish)),
                Phase(s => Of(s, Phases.SignalToCompletion)), samples.Count(s => !s.Ok), samples.FirstOrDefault(s => !s.Ok)?.Error);
            windows.Add(window);
            Console.WriteLine($"  round {round} {variant}: {window.OpsPerSecond:N0} ops/s, signal to completion p50 {window.SignalToCompletion.P50:N1} p99 {window.SignalToCompletion.P99:N1} ms, failures {window.Failures}");
        }

        return windows;
    }

    /// <summary>Start with a business key, signal, long-poll until completed: the signal and the long-poll by id or by key.</summary>
    private static async Task<OperationSample> RoundtripAsync(WorkflowClient client, string variant, string businessKey, int index, CancellationToken ct)
    {
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync(SignalRoundtripScenario.Definition, new { n = index }, ct, businessKey));
        clock.Lap(Phases.Start);
        if (variant == ById)
        {
            await client.SignalAsync(id, "go", new { value = index }, ct);
        }
        else
        {
            await client.SignalByKeyAsync(SignalRoundtripScenario.Definition, businessKey, "go", new { value = index }, ct);
        }

        clock.Lap(Phases.SignalPublish);
        var done = variant == ById
            ? await client.WaitForCompletionAsync(id, ct)
            : await client.WaitForCompletionByKeyAsync(SignalRoundtripScenario.Definition, businessKey, ct);
        clock.Lap(Phases.SignalToCompletion);
        return clock.Finish(Json.NotCompleted(done) ?? (Json.Id(done) == id ? null : $"the key answered instance {Json.Id(done)}, not {id}"));
    }

    private string Render(IReadOnlyList<FiringResult> firings, IReadOnlyList<KeyWindow> windows, DateTimeOffset started)
    {
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"# Schedules on {backendName}, {started:yyyy-MM-dd}");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Run on {MachineFacts.Summary()}; load client, service and database on this one machine. Command:");
        md.AppendLine();
        md.AppendLine("```bash").AppendLine(BenchReportFiles.CommandLine).AppendLine("```");
        md.AppendLine();
        md.AppendLine("## Firing");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"One node with the service's Schedules defaults (poll 1 s, claim batch 16), on a fresh database per spread. Each schedule fires every minute and starts `{Definition}`, which completes in its first run. *{OnTheMinute}*: every schedule's cron is `* * * * *`, so all are due at once. *{Staggered}*: schedule i fires at second i×60/count of each minute (a six-field cron). The first whole minute after the schedules exist warms the node and is not measured.");
        md.AppendLine();
        md.AppendLine("Fire delay is the instance's creation time (the store's clock) minus its occurrence's time (from its idempotency key `schedule:{id}:{fire ms}`), both read from the store. Occurrences/s is the measured occurrences over the measured minutes; a burst's rate is a minute's occurrences over the time from that minute to its last start (the median over the minutes; on the minute only, as staggered occurrences are no burst). Service CPU is the node's, over the measured minutes, per occurrence.");
        md.AppendLine();
        md.AppendLine("| spread | schedules | minutes | expected | started | missing | twice | occurrences/s | burst/s | delay p50 ms | p99 ms | max ms | service CPU ms/occurrence |");
        md.AppendLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var f in firings)
        {
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| {f.Spread} | {f.Schedules:N0} | {f.Minutes} | {f.Expected:N0} | {f.Started:N0} | {f.Missing:N0} | {f.Duplicated:N0} | {f.PerSecond:N1} | {(f.Spread == Staggered ? "—" : f.BurstPerSecond.ToString("N1", CultureInfo.InvariantCulture))} | {f.Delay.P50:N0} | {f.Delay.P99:N0} | {f.Delay.Max:N0} | {f.ServiceCpuMsPerOccurrence:N3} |");
        }

        md.AppendLine();
        md.AppendLine("Every measured minute: occurrences, the last one's delay (s), the burst's rate.");
        md.AppendLine();
        foreach (var f in firings)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"- {f.Spread}: {string.Join("; ", f.PerMinute.Select(m => $"{m.Minute} {m.Occurrences:N0}, last {m.LastDelaySeconds:N1} s, {m.BurstPerSecond:N0}/s"))}");
        }

        md.AppendLine();
        md.AppendLine("## Addressing by business key against by id");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"One node, one process. Each operation starts `signal-roundtrip` with a business key, signals `go` and long-polls until it completed. *{ById}*: the signal (`POST /instances/{{id}}/signals`) and the long-poll (`GET /instances/{{id}}`) by instance id. *{ByKey}*: both by definition and key (`/definitions/signal-roundtrip/instances/{{key}}`). Windows of {options.WindowOps:N0} operations at concurrency {RoundtripConcurrency}, taken in turns (A B, then B A) for {options.Windows} rounds after {WarmUpOps} unmeasured operations each. Signal to completion is the signal's request plus the long-poll; each is shown apart (medians over the windows).");
        md.AppendLine();
        md.AppendLine("| variant | ops/s (median) | vs by-id | signal to completion p50 ms | p99 ms | signal p50 ms | p99 ms | long-poll p50 ms | p99 ms | operation p50 ms | p99 ms | failures |");
        md.AppendLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        var baseOps = AlternatingWindows.Median(windows.Where(w => w.Variant == ById).Select(w => w.OpsPerSecond));
        foreach (var variant in new[] { ById, ByKey })
        {
            var mine = windows.Where(w => w.Variant == variant).ToList();
            var ops = AlternatingWindows.Median(mine.Select(w => w.OpsPerSecond));
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| {variant} | {ops:N0} | {ops / baseOps:P1} | {AlternatingWindows.Median(mine.Select(w => w.SignalToCompletion.P50)):N1} | {AlternatingWindows.Median(mine.Select(w => w.SignalToCompletion.P99)):N1} | {AlternatingWindows.Median(mine.Select(w => w.Signal.P50)):N1} | {AlternatingWindows.Median(mine.Select(w => w.Signal.P99)):N1} | {AlternatingWindows.Median(mine.Select(w => w.LongPoll.P50)):N1} | {AlternatingWindows.Median(mine.Select(w => w.LongPoll.P99)):N1} | {AlternatingWindows.Median(mine.Select(w => w.Operation.P50)):N1} | {AlternatingWindows.Median(mine.Select(w => w.Operation.P99)):N1} | {mine.Sum(w => w.Failures)} |");
        }

        md.AppendLine();
        md.AppendLine("| round | variant | ops | ops/s | signal to completion p50 ms | p99 ms | failures |");
        md.AppendLine("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
        foreach (var w in windows)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {w.Round} | {w.Variant} | {w.Ops:N0} | {w.OpsPerSecond:N0} | {w.SignalToCompletion.P50:N1} | {w.SignalToCompletion.P99:N1} | {w.Failures} |");
        }

        return md.ToString();
    }

    private static DateTimeOffset NextMinute(DateTimeOffset at) =>
        new DateTimeOffset(at.Year, at.Month, at.Day, at.Hour, at.Minute, 0, TimeSpan.Zero).AddMinutes(1);

    private static async Task DelayUntilAsync(DateTimeOffset at, CancellationToken cancellationToken)
    {
        if (at - DateTimeOffset.UtcNow is { Ticks: > 0 } wait)
        {
            // The measured minutes are wall-clock minutes: the run waits for them to pass.
            await Task.Delay(wait, cancellationToken);
        }
    }

    private sealed record MinuteFigures(string Minute, int Occurrences, double LastDelaySeconds, double BurstPerSecond);

    private sealed record FiringResult(string Spread, int Schedules, int Minutes, int Expected, int Started, int Missing, int Duplicated,
        double PerSecond, double BurstPerSecond, LatencySummary Delay, double ServiceCpuMsPerOccurrence, IReadOnlyList<MinuteFigures> PerMinute);

    private sealed record KeyWindow(int Round, string Variant, int Ops, double OpsPerSecond, LatencySummary Operation, LatencySummary SignalToCompletion,
        LatencySummary Signal, LatencySummary LongPoll, int Failures, string? FirstError);
}
