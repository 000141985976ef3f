using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// Fault 9: clock skew. Of three nodes one runs its process clock five minutes ahead and one five minutes behind
/// (libfaketime, preloaded into the process: the service has no test hook for its clock). The load starts workflows that
/// sleep a second on a timer and then wait for a signal sent with a due time 1.5 s ahead; whichever node computes a due
/// time or applies a signal, every timer and delayed signal fires by the store's clock, never early.
/// </summary>
internal sealed class ClockSkewScenario : FaultScenario
{
    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/fault-timers.json";
    private const string FakeTime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    private static readonly TimeSpan Skew = TimeSpan.FromMinutes(5);

    /// <summary>How early an event may look: two nodes' measured offsets to the database's clock differ by a few milliseconds.</summary>
    private static readonly TimeSpan Tolerance = TimeSpan.FromMilliseconds(100);

    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store runs one node and its clock is that node's: there is no second clock to disagree with"
        : null;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        if (!File.Exists(FakeTime))
        {
            throw new InvalidOperationException($"libfaketime is not installed ({FakeTime}; apt-get install faketime)");
        }

        var workflows = context.Short ? 200 : 1000;
        await using var nodes = context.CreateNodes();
        foreach (var (node, offset) in new[] { ("node-1", "+5m"), ("node-2", "-5m") })
        {
            nodes.Configure(node, new Dictionary<string, string>
            {
                ["LD_PRELOAD"] = FakeTime,
                // The monotonic clock moves by the same constant, which nothing can see: the process only ever subtracts two
                // of its readings. Not FAKETIME_DONT_FAKE_MONOTONIC: with it, libfaketime 0.9.10 shifts the deadline of every
                // monotonic timed wait by the wall clock's offset, so each one (Thread.Sleep, Monitor.Wait, a synchronous
                // socket read's timeout) returns at once, and a node migrating the schema failed at start-up with
                // "Timeout during reading attempt" on its first read (a fault of the harness, which no real host has).
                ["FAKETIME"] = offset,
            });
        }

        await nodes.StartAsync(3, ct);
        await context.PublishAsync(nodes, DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: 16);
        var complete = new ConcurrentBag<Guid>();
        var next = -1;
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, 16).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < workflows)
            {
                var id = await client.StartAsync("fault-timers", new { i }, $"skew-start-{i}", ct);
                await client.SignalAsync(id, "a", new { i }, $"skew-a-{i}", ct, DateTimeOffset.UtcNow.AddSeconds(1.5));
                complete.Add(id);
                await client.WaitForCompletionAsync(id, ct);
            }
        }));
        var loadTime = clock.Elapsed;
        var recovery = await Drain.UntilCompletedAsync(context.Backend, complete.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(1), ct);

        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation { MustComplete = complete.ToHashSet(), CompletedVersions = new HashSet<int> { 3, 4 } },
            LoadTime = loadTime,
            Nodes = 3,
            FaultsInjected = 2,
        };
        await using var store = await context.Backend.OpenStoreReaderAsync(ct);
        var timers = Delays(await store.ReadDueAndFiredAsync("$timer", "TimerFired", null, ct));
        var signals = Delays(await store.ReadDueAndFiredAsync("a", "SignalReceived", "wait-a", ct));
        foreach (var (what, fired) in new[] { ("timers", timers), ("delayed signals", signals) })
        {
            var early = fired.Where(f => f < -Tolerance).ToList();
            if (fired.Count < complete.Count)
            {
                outcome.Failures.Add($"{fired.Count} {what} fired for {complete.Count} workflows");
            }

            if (early.Count > 0)
            {
                outcome.Failures.Add(string.Create(CultureInfo.InvariantCulture, $"{early.Count} {what} fired early, up to {-early.Min().TotalSeconds:0.000} s before they were due"));
            }

            var sorted = fired.Order().ToList();
            if (sorted.Count > 0)
            {
                outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{what}: {sorted.Count} fired, after their due time by min {sorted[0].TotalMilliseconds:0} ms, median {sorted[sorted.Count / 2].TotalMilliseconds:0} ms, max {sorted[^1].TotalMilliseconds:0} ms"));
            }
        }

        if (recovery is null)
        {
            outcome.Failures.Add("the workflows did not all complete");
        }

        outcome.Notes.Insert(0, $"node-1's process clock {Skew.TotalMinutes:0} min ahead, node-2's {Skew.TotalMinutes:0} min behind (libfaketime), node-0's true; {workflows:N0} workflows on 16 workers: start (a 1 s timer), then signal 'a' due 1.5 s later by the client's clock");
        return outcome;
    }

    /// <summary>For each (due time, firing event) pair, how long after its due time it fired (negative: early).</summary>
    private static List<TimeSpan> Delays(IReadOnlyList<(long DueAtMs, DateTime At)> pairs) =>
        [.. pairs.Select(p => new DateTimeOffset(p.At) - DateTimeOffset.FromUnixTimeMilliseconds(p.DueAtMs))];
}
