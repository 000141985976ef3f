using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 14: schedules under node faults. Three nodes, one with its process clock five minutes ahead (libfaketime, as
/// <see cref="ClockSkewScenario"/>), fire several schedules every second (cron and interval) beside the two-signal load;
/// nodes are SIGKILLed and started again, and one is paused (SIGSTOP) for twice the schedule lease. Read from the store:
/// every occurrence between the row's start and end started exactly once (its idempotency key is the schedule and the
/// fire time), none before its time on the store's clock, and each within the poll interval plus a documented slack,
/// except after a fault, where a dead or frozen node's lease must expire first.
/// </summary>
internal sealed class ScheduleFaultScenario : FaultScenario
{
    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/bench-scheduled.json";
    private const string Definition = "bench-scheduled";
    private const int CronSchedules = 3;
    private const int IntervalSchedules = 2;
    private static readonly TimeSpan Skew = TimeSpan.FromMinutes(5);
    private const string SkewedNode = "node-2";

    /// <summary>The schedule runner's poll (Schedules:PollInterval, the service's default): it bounds how late an occurrence starts.</summary>
    private static readonly TimeSpan PollInterval = TimeSpan.FromSeconds(1);

    /// <summary>
    /// What the row adds to the poll interval before an occurrence counts as late: three nodes, PostgreSQL and the load
    /// share two cores, where a pass waits for the CPU, a connection or a garbage collection now and then.
    /// </summary>
    internal static readonly TimeSpan Slack = TimeSpan.FromSeconds(2);

    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store runs one node: no other node fires while it is killed or paused, and its clock is the store's"
        : null;

    public override string? LeftOutOfShortTier(string backend) =>
        "three nodes, one skewed, with kills and a pause take close to three minutes, and on CI's two cores its lateness "
        + "bound is too tight to be steady";

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var kills = context.Short ? 2 : 6;
        var pauses = context.Short ? 1 : 3;
        var lease = FaultContext.LeaseDuration;
        await using var nodes = context.CreateNodes(new Dictionary<string, string>
        {
            ["Schedules__LeaseDuration"] = lease.ToString("c", CultureInfo.InvariantCulture),
            ["Schedules__PollInterval"] = PollInterval.ToString("c", CultureInfo.InvariantCulture),
        });
        nodes.Configure(SkewedNode, ClockSkewScenario.SkewedClock(Skew));
        await nodes.StartAsync(3, ct);
        var clocksBefore = await ClockSkewScenario.ReadClocksAsync(nodes, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        await context.PublishAsync(nodes, DefinitionFile);

        // Every schedule starts at a whole second a little ahead (creating them must not make them late), so every whole
        // second after it is one occurrence of each; the row checks from the second after, whether or not a calendar
        // counts its start itself.
        var startAt = WholeSecond(DateTimeOffset.UtcNow.AddSeconds(10));
        var rowStart = startAt.AddSeconds(1);
        var schedules = new List<Guid>();
        for (var i = 0; i < CronSchedules + IntervalSchedules; i++)
        {
            schedules.Add(await CreateScheduleAsync(context, nodes, i < CronSchedules
                ? new { name = $"every-second-{i}", definition = Definition, cron = "* * * * * *", startAt, overlapPolicy = "AllowAll", catchUpPolicy = "All", catchUpWindowSeconds = 600 }
                : new { name = $"every-second-{i}", definition = Definition, intervalSeconds = 1, startAt, overlapPolicy = "AllowAll", catchUpPolicy = "All", catchUpWindowSeconds = 600 }));
        }

        var faults = new List<(DateTimeOffset From, DateTimeOffset To, string What)>();
        using var running = new LoadUnderFault(context, nodes, "sched", concurrency: 8);
        var lastFault = Stopwatch.GetTimestamp();
        TimeSpan loadTime;
        DateTimeOffset rowEnd;
        try
        {
            await DelayUntilAsync(rowStart.AddSeconds(3), ct);
            for (var k = 0; k < kills; k++)
            {
                var up = nodes.All.Where(n => n.IsUp).ToList();
                var victim = up[context.Random.Next(up.Count)];
                var killed = DateTimeOffset.UtcNow;
                await victim.KillAsync();
                await nodes.StartAsync(victim, ct);
                faults.Add((killed, DateTimeOffset.UtcNow, $"SIGKILL {victim.Name}"));
                lastFault = Stopwatch.GetTimestamp();
                // The fault schedule: a kill every few seconds.
                await Task.Delay(TimeSpan.FromSeconds(3), ct);
            }

            for (var p = 0; p < pauses; p++)
            {
                var victim = nodes.All[p % nodes.All.Count];
                var frozen = DateTimeOffset.UtcNow;
                victim.Freeze();
                await Task.Delay(lease * 2, ct);
                victim.Thaw();
                faults.Add((frozen, DateTimeOffset.UtcNow, $"SIGSTOP {victim.Name} {(lease * 2).TotalSeconds:0} s"));
                lastFault = Stopwatch.GetTimestamp();
                await Task.Delay(TimeSpan.FromSeconds(3), ct);
            }

            // Calm after the last fault: the thawed node fires with the others.
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            rowEnd = WholeSecond(DateTimeOffset.UtcNow);
        }
        finally
        {
            loadTime = await running.StopAsync();
        }

        // The row's occurrences are over: the schedules stop, so that the drain below counts the load's work and theirs alone.
        foreach (var id in schedules)
        {
            await PostAsync(context, nodes, $"/schedules/{id}/pause", new { reason = "the fault row ended" }, System.Net.HttpStatusCode.OK);
        }

        var load = running.Load;
        var clocksAfter = await ClockSkewScenario.ReadClocksAsync(nodes, ct);
        var expected = (int)(rowEnd - rowStart).TotalSeconds * schedules.Count;
        var starts = await UntilStartedAsync(context.Backend, rowStart, rowEnd, expected, ct);
        var bound = FaultContext.LeaseDuration + FaultContext.PollInterval + TimeSpan.FromSeconds(10);
        int scheduled;
        await using (var store = await context.Backend.OpenStoreReaderAsync(ct))
        {
            scheduled = (await store.ReadScheduledStartsAsync(ct)).Count;
        }

        var recovery = await Drain.UntilCompletedAsync(context.Backend, load.MustComplete.Count + scheduled, lastFault, bound + TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            // Scheduled instances complete in their first commit; the load's at its third.
            Expectation = new CheckerExpectation { MustComplete = load.MustComplete, CompletedVersions = new HashSet<int> { 1, 3 } },
            LoadTime = loadTime,
            Nodes = 3,
            FaultsInjected = faults.Count + (ClockSkewScenario.Took(Skew, clocksBefore[SkewedNode]) && ClockSkewScenario.Took(Skew, clocksAfter[SkewedNode]) ? 1 : 0),
            Recovery = recovery,
            RecoveryBound = bound,
        };
        foreach (var (when, read) in new[] { ("before", clocksBefore[SkewedNode]), ("after", clocksAfter[SkewedNode]) })
        {
            if (!ClockSkewScenario.Took(Skew, read))
            {
                outcome.Failures.Add($"{SkewedNode}'s clock read {ClockSkewScenario.Seconds(read)} {when} the load, not {ClockSkewScenario.Seconds(Skew)}: the skew did not take effect as set");
            }
        }

        var verdict = OccurrenceCheck.Check(schedules, rowStart, rowEnd, starts, faults.Select(f => (f.From, f.To)).ToList(), PollInterval + Slack, lease + PollInterval + Slack);
        outcome.Failures.AddRange(verdict.Failures);
        outcome.Notes.Add($"{CronSchedules} schedules on cron '* * * * * *' and {IntervalSchedules} on intervalSeconds 1, all from {startAt:HH:mm:ss} (overlap AllowAll, catch-up All); {SkewedNode}'s process clock {ClockSkewScenario.Seconds(Skew)} (libfaketime; read {ClockSkewScenario.Seconds(clocksBefore[SkewedNode])} before, {ClockSkewScenario.Seconds(clocksAfter[SkewedNode])} after); Schedules:LeaseDuration {lease.TotalSeconds:0} s, PollInterval {PollInterval.TotalSeconds:0} s");
        outcome.Notes.Add($"faults: {string.Join("; ", faults.Select(f => string.Create(CultureInfo.InvariantCulture, $"{f.What} at {f.From:HH:mm:ss.f} (back {(f.To - f.From).TotalSeconds:0.0} s later)")))}; load: 8 workers of start, 'a', 0-50 ms, 'b'");
        outcome.Notes.Add(verdict.Summary);
        FaultChecks.AddLoadFailures(outcome, load);
        FaultChecks.AddRecoveryFailure(outcome);
        return outcome;
    }

    private static DateTimeOffset WholeSecond(DateTimeOffset at) => DateTimeOffset.FromUnixTimeSeconds(at.ToUnixTimeSeconds());

    private static async Task DelayUntilAsync(DateTimeOffset at, CancellationToken cancellationToken)
    {
        if (at - DateTimeOffset.UtcNow is { Ticks: > 0 } wait)
        {
            // The row's faults fall on wall-clock seconds the schedules fire on.
            await Task.Delay(wait, cancellationToken);
        }
    }

    /// <summary>The occurrences due in [from, to) as the store holds them, once all <paramref name="expected"/> have started or a minute passed.</summary>
    private static async Task<IReadOnlyList<ScheduledStart>> UntilStartedAsync(Backend backend, DateTimeOffset from, DateTimeOffset to, int expected,
        CancellationToken cancellationToken)
    {
        await using var store = await backend.OpenStoreReaderAsync(cancellationToken);
        var waited = Stopwatch.StartNew();
        while (true)
        {
            var starts = (await store.ReadScheduledStartsAsync(cancellationToken))
                .Where(s => s.FireMs >= from.ToUnixTimeMilliseconds() && s.FireMs < to.ToUnixTimeMilliseconds()).ToList();
            if (starts.Count >= expected || waited.Elapsed > TimeSpan.FromMinutes(1))
            {
                return starts;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(200), cancellationToken);
        }
    }

    private static async Task<Guid> CreateScheduleAsync(FaultContext context, ServiceNodes nodes, object schedule) =>
        Json.Id(await PostAsync(context, nodes, "/schedules", schedule, System.Net.HttpStatusCode.Created));

    /// <summary>One API call through a node that is up (the faults are over or not yet begun when the row calls it).</summary>
    private static async Task<System.Text.Json.Nodes.JsonNode?> PostAsync(FaultContext context, ServiceNodes nodes, string path, object body,
        System.Net.HttpStatusCode expected)
    {
        using var http = new HttpClient { BaseAddress = nodes.NextAddress(), Timeout = TimeSpan.FromSeconds(30) };
        http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, context.ApiKey.Key);
        using var response = await http.PostAsJsonAsync(path, body, context.Cancellation);
        var text = await response.Content.ReadAsStringAsync(context.Cancellation);
        if (response.StatusCode != expected)
        {
            throw new ApiCallException($"POST {path}", response.StatusCode, text);
        }

        return System.Text.Json.Nodes.JsonNode.Parse(text);
    }
}
