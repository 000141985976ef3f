using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 10: poison and resource abuse beside a normal load. Another application (a caller with a key of its own) sends
/// signals whose processing always throws, expressions that loop for ever or allocate without end (stopped by the
/// expression limits, then dead-lettered after the configured attempts), and holds 1,000 concurrent long-polls open.
/// The normal load completes meanwhile and keeps its latency (its pairs' p95 beside the abuse against its p95 alone,
/// measured first; its own long-polls still get slots), the long-polls are all answered, and the database connections
/// stay within pool size × nodes.
/// </summary>
internal sealed class ResourceAbuseScenario : FaultScenario
{
    public override string? LeftOutOfShortTier(string backend) => SeveralNodesOnlyInShortTier(backend);

    private const string RunawayFile = "tests/WorkflowService.Benchmarks/Definitions/fault-runaway.json";
    private const int LongPolls = 1000;
    private const int LongPollSeconds = 20;

    /// <summary>
    /// How much slower the load's p95 may be beside the abuse than alone: the abusers take workers for up to their
    /// expression time limit each, so some slowdown is expected; a load that waits on them (a queue blocked behind a
    /// poison signal, a worker pool exhausted) is many times slower.
    /// </summary>
    private const double LatencyFactor = 3;

    private static readonly TimeSpan LatencySlack = TimeSpan.FromMilliseconds(250);

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var abusers = context.Short ? 12 : 60;
        var abuser = BenchApiKey.Create("abuser");
        await using var nodes = context.CreateNodes(new Dictionary<string, string>(abuser.ServiceEnvironmentAt(1))
        {
            ["Engine__MaxAttempts"] = "2",
            ["Engine__RetryBackoff"] = "00:00:00.200",
        });
        await nodes.StartAsync(nodeCount, ct);
        foreach (var file in new[] { TwoSignalLoad.DefinitionFile, PoisonWorkflows.DefinitionFile, RunawayFile })
        {
            await context.PublishAsync(nodes, file);
        }

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: 16);
        using var abusive = new FaultClient(nodes, ledger, abuser.Key, concurrency: 16);

        // The instances the long-polls wait on: waiting for a signal nobody sends.
        var idle = new ConcurrentBag<Guid>();
        await Parallel.ForEachAsync(Enumerable.Range(0, LongPolls), new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = ct },
            async (i, token) => idle.Add(await abusive.StartAsync(TwoSignalLoad.Definition, new { idle = i }, $"idle-{i}", token)));

        var load = new TwoSignalLoad(client, "abuse");
        var faulting = true;
        var clock = Stopwatch.StartNew();
        var running = load.RunAsync(8, int.MaxValue, () => Volatile.Read(ref faulting), copies: 1, ct);

        // The load alone first: its latency without abuse, to hold the latency beside the abuse to.
        await Task.Delay(TimeSpan.FromSeconds(context.Short ? 5 : 15), ct);
        var memoryAlone = NodesMemory(nodes);
        var abuseBegan = Stopwatch.GetTimestamp();
        var polls = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = LongPolls + 16 }) { Timeout = TimeSpan.FromSeconds(LongPollSeconds + 30) };
        polls.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, abuser.Key);
        var addresses = nodes.All.Select(n => n.Process!.Address).ToList();
        var pollAnswers = new ConcurrentBag<(HttpStatusCode? Status, TimeSpan Took)>();
        var holding = Task.WhenAll(idle.Select((id, i) => LongPollAsync(polls, addresses[i % addresses.Count], id, pollAnswers, ct)));
        var abused = new List<Guid>();
        long abuseEnded;
        var memoryHolding = PeakMemoryAsync(nodes, holding, ct);
        try
        {
            for (var i = 0; i < abusers; i++)
            {
                var (file, input) = (i % 3) switch
                {
                    0 => (PoisonWorkflows.Definition, (object)new { i }),
                    1 => ("fault-runaway", new { kind = "loop" }),
                    _ => ("fault-runaway", new { kind = "allocate" }),
                };
                var id = await abusive.StartAsync(file, input, $"abuser-{i}", ct);
                await abusive.SignalAsync(id, "go", null, $"abuser-go-{i}", ct);
                abused.Add(id);
            }
        }
        finally
        {
            // The long-polls end by themselves (their timeout); the load stops once they have.
            await holding;
            abuseEnded = Stopwatch.GetTimestamp();
            polls.Dispose();
            Volatile.Write(ref faulting, false);
            await running;
        }

        var loadTime = clock.Elapsed;
        var mustComplete = load.MustComplete;
        var recovery = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation
            {
                MustComplete = mustComplete,
                CompletedVersions = TwoSignalLoad.CompletedVersions,
                MayStayFaulted = abused.ToHashSet(),
            },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = abusers + LongPolls,
        };

        await using (var store = await context.Backend.OpenStoreReaderAsync(ct))
        {
            var faulted = (await store.CountByStatusAsync(ct)).GetValueOrDefault("Faulted");
            if (faulted < abusers)
            {
                outcome.Failures.Add($"{abusers - faulted} of {abusers} poison and runaway signals were not dead-lettered (their instances faulted) by the end");
            }
        }

        var answers = pollAnswers.ToList();
        // Within one caller's share (RateLimiting:MaxLongPollsPerCaller) and the node's cap: every one is held and answered.
        var wrong = answers.Where(a => a.Status != HttpStatusCode.OK).ToList();
        if (wrong.Count > 0)
        {
            outcome.Failures.Add($"{wrong.Count} of {LongPolls} long-polls were not held and answered 200: {string.Join(", ", wrong.GroupBy(a => a.Status?.ToString() ?? "no answer").Select(g => $"{g.Count()}× {g.Key}"))}");
        }

        if (recovery is null)
        {
            outcome.Failures.Add("the normal load's workflows did not all complete");
        }

        var alone = load.Timings.Where(t => t.Began < abuseBegan).Select(t => t.Took).ToList();
        var beside = load.Timings.Where(t => t.Began >= abuseBegan && t.Began < abuseEnded).Select(t => t.Took).ToList();
        var latency = string.Create(CultureInfo.InvariantCulture,
            $"the load's pairs (start to completed, 0-50 ms think time included) alone: p50 {Percentile(alone, 0.5).TotalMilliseconds:0} / p95 {Percentile(alone, 0.95).TotalMilliseconds:0} ms ({alone.Count}); beside the abuse: p50 {Percentile(beside, 0.5).TotalMilliseconds:0} / p95 {Percentile(beside, 0.95).TotalMilliseconds:0} ms ({beside.Count})");
        var bound = Percentile(alone, 0.95) * LatencyFactor + LatencySlack;
        if (alone.Count == 0 || beside.Count == 0 || Percentile(beside, 0.95) > bound)
        {
            outcome.Failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"the normal load did not keep its latency beside the abuse (p95 at most {LatencyFactor:0}× alone + {LatencySlack.TotalMilliseconds:0} ms = {bound.TotalMilliseconds:0} ms): {latency}"));
        }

        var heldMemory = await memoryHolding;
        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{abusers} abusers beside the load (a third each: a step that always throws, an expression looping for ever, one allocating without end; 2 attempts each), {LongPolls:N0} long-polls of {LongPollSeconds} s held at once over {nodeCount} node(s) by another caller ({answers.Count(a => a.Status == HttpStatusCode.OK)} answered 200, longest {answers.Max(a => a.Took).TotalSeconds:0.0} s; the nodes' resident memory {memoryAlone / 1048576.0:0} MB before, {heldMemory / 1048576.0:0} MB at most while held); load: 8 workers of start, 'a', 0-50 ms, 'b'; {latency}"));
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }

    /// <summary>The nodes' resident memory in all (VmRSS), in bytes.</summary>
    private static long NodesMemory(ServiceNodes nodes) =>
        nodes.All.Where(n => n.Process is { HasExited: false }).Sum(n => ResourceProbe.Read(n.Process!.Pid).ServiceWorkingSetBytes);

    /// <summary>The highest <see cref="NodesMemory"/> seen (every half second) until <paramref name="until"/> ends.</summary>
    private static async Task<long> PeakMemoryAsync(ServiceNodes nodes, Task until, CancellationToken ct)
    {
        var peak = 0L;
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(500));
        while (!until.IsCompleted && await timer.WaitForNextTickAsync(ct))
        {
            peak = Math.Max(peak, NodesMemory(nodes));
        }

        return peak;
    }

    private static TimeSpan Percentile(List<TimeSpan> values, double p)
    {
        if (values.Count == 0)
        {
            return TimeSpan.Zero;
        }

        var sorted = values.Order().ToList();
        return sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Count) - 1, 0, sorted.Count - 1)];
    }

    private static async Task LongPollAsync(HttpClient http, Uri node, Guid id, ConcurrentBag<(HttpStatusCode?, TimeSpan)> answers, CancellationToken ct)
    {
        var started = Stopwatch.GetTimestamp();
        try
        {
            using var response = await http.GetAsync(new Uri(node, $"/instances/{id}?waitFor=Completed&timeout={LongPollSeconds}"), ct);
            answers.Add((response.StatusCode, Stopwatch.GetElapsedTime(started)));
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException && !ct.IsCancellationRequested)
        {
            answers.Add((null, Stopwatch.GetElapsedTime(started)));
        }
    }
}
