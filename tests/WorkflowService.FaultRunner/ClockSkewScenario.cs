using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 9: clock skew. Of three nodes one runs its process clock five minutes ahead and one five minutes behind
/// (libfaketime, preloaded into the process: the service has no test hook for its clock). The load starts workflows that
/// sleep a second on a timer and then wait for a signal sent with a due time 1.5 s ahead; whichever node computes a due
/// time or applies a signal, every timer and delayed signal fires by the store's clock, never early. Each node's clock is
/// read back (its HTTP Date header) before and after the load: a skew that did not take effect fails the row.
/// </summary>
internal sealed class ClockSkewScenario : FaultScenario
{
    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/fault-timers.json";
    private const string FakeTime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    private static readonly TimeSpan Skew = TimeSpan.FromMinutes(5);

    /// <summary>How early an event may look: two nodes' measured offsets to the database's clock differ by a few milliseconds.</summary>
    internal static readonly TimeSpan Tolerance = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// How far a node's clock, read from its Date header, may be from the skew it was given: the header has whole seconds
    /// and the server refreshes it once a second, so a true clock reads up to 2 s behind; a second more for the request.
    /// </summary>
    private static readonly TimeSpan ClockReading = TimeSpan.FromSeconds(3);

    /// <summary>Each node's clock skew: one true, one ahead, one behind.</summary>
    private static readonly (string Node, TimeSpan Skew)[] Clocks = [("node-0", TimeSpan.Zero), ("node-1", Skew), ("node-2", -Skew)];

    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store runs one node and its clock is that node's: there is no second clock to disagree with"
        : null;

    /// <summary>A node's settings that run its process clock <paramref name="skew"/> off (libfaketime); fails where it is not installed.</summary>
    internal static IReadOnlyDictionary<string, string> SkewedClock(TimeSpan skew)
    {
        if (!File.Exists(FakeTime))
        {
            throw new InvalidOperationException($"libfaketime is not installed ({FakeTime}; apt-get install faketime)");
        }

        return new Dictionary<string, string>
        {
            ["LD_PRELOAD"] = FakeTime,
            // The monotonic clock moves by the same constant, which nothing can see: the process only ever subtracts two
            // of its readings. Not FAKETIME_DONT_FAKE_MONOTONIC: with it, libfaketime 0.9.10 shifts the deadline of every
            // monotonic timed wait by the wall clock's offset, so each one (Thread.Sleep, Monitor.Wait, a synchronous
            // socket read's timeout) returns at once, and a node migrating the schema failed at start-up with
            // "Timeout during reading attempt" on its first read (a fault of the harness, which no real host has).
            // A relative offset in seconds.
            ["FAKETIME"] = string.Create(CultureInfo.InvariantCulture, $"{(skew < TimeSpan.Zero ? "-" : "+")}{skew.Duration().TotalSeconds:0}"),
        };
    }

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;

        var workflows = context.Short ? 200 : 1000;
        await using var nodes = context.CreateNodes();
        foreach (var (node, skew) in Clocks.Where(c => c.Skew != TimeSpan.Zero))
        {
            nodes.Configure(node, SkewedClock(skew));
        }

        await nodes.StartAsync(Clocks.Length, ct);
        var clocksBefore = await ReadClocksAsync(nodes, ct);
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
        var clocksAfter = await ReadClocksAsync(nodes, ct);

        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation { MustComplete = complete.ToHashSet(), CompletedVersions = new HashSet<int> { 3, 4 } },
            LoadTime = loadTime,
            Nodes = Clocks.Length,
            // The nodes seen running with the skew they were given, before and after the load, not the ones asked for.
            FaultsInjected = Clocks.Count(c => c.Skew != TimeSpan.Zero && Took(c.Skew, clocksBefore[c.Node]) && Took(c.Skew, clocksAfter[c.Node])),
        };
        foreach (var (node, skew) in Clocks)
        {
            foreach (var (when, read) in new[] { ("before", clocksBefore[node]), ("after", clocksAfter[node]) })
            {
                if (!Took(skew, read))
                {
                    outcome.Failures.Add($"{node}'s clock read {Seconds(read)} {when} the load, not {Seconds(skew)}: the skew did not take effect as set");
                }
            }
        }
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

        outcome.Notes.Insert(0, $"{string.Join(", ", Clocks.Select(c => c.Skew == TimeSpan.Zero ? $"{c.Node}'s clock true" : $"{c.Node}'s process clock set {Seconds(c.Skew)}"))} (libfaketime); {workflows:N0} workflows on 16 workers: start (a 1 s timer), then signal 'a' due 1.5 s later by the client's clock");
        outcome.Notes.Insert(1, "each node's clock as it answered (its HTTP Date header against this machine's clock, whole seconds), before the load: " +
                                string.Join(", ", Clocks.Select(c => $"{c.Node} {Seconds(clocksBefore[c.Node])}")) + "; after: " +
                                string.Join(", ", Clocks.Select(c => $"{c.Node} {Seconds(clocksAfter[c.Node])}")));
        return outcome;
    }

    /// <summary>Whether a clock read <paramref name="read"/> off is the <paramref name="skew"/> it was given.</summary>
    internal static bool Took(TimeSpan skew, TimeSpan read) => (read - skew).Duration() <= ClockReading;

    internal static string Seconds(TimeSpan offset) => string.Create(CultureInfo.InvariantCulture, $"{offset.TotalSeconds:+0;-0;0} s");

    /// <summary>Each node's clock against this machine's: its Date header against the middle of the request, the median of five.</summary>
    internal static async Task<Dictionary<string, TimeSpan>> ReadClocksAsync(ServiceNodes nodes, CancellationToken cancellationToken)
    {
        var clocks = new Dictionary<string, TimeSpan>();
        foreach (var node in nodes.All)
        {
            using var http = new HttpClient { BaseAddress = node.Process!.Address, Timeout = TimeSpan.FromSeconds(10) };
            var readings = new List<TimeSpan>();
            for (var i = 0; i < 5; i++)
            {
                var sent = DateTimeOffset.UtcNow;
                using var response = await http.GetAsync("/health/live", cancellationToken);
                var answered = DateTimeOffset.UtcNow;
                var date = response.Headers.Date ?? throw new InvalidOperationException($"{node.Name} answered GET /health/live without a Date header");
                readings.Add(date - (sent + ((answered - sent) / 2)));
            }

            clocks[node.Name] = readings.Order().ElementAt(readings.Count / 2);
        }

        return clocks;
    }

    /// <summary>For each (due time, firing event) pair, how long after its due time it fired (negative: early).</summary>
    private static List<TimeSpan> Delays(IReadOnlyList<(long DueAtMs, DateTime At)> pairs) =>
        [.. pairs.Select(p => new DateTimeOffset(p.At) - DateTimeOffset.FromUnixTimeMilliseconds(p.DueAtMs))];
}
