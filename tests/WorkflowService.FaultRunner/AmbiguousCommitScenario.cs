using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 5: ambiguous commits. The nodes run the fault host (tests/WorkflowService.FaultHost): the service with a
/// test-only decorator around the store's instance and queue facets that fails a share of their writes (creating an
/// instance, committing a wait point, queueing, claiming, giving back, dead-lettering and replaying a signal) in one of
/// four ways: at once, after a timeout, and, the case this row is for, after the write committed (the caller is told it
/// failed, with or without a timeout first). The failure is the store driver's own transient exception, so the API
/// answers 503 and the workers meet it as they would a real one. The load client retries every call with its key; the
/// checker then holds the store to what was acknowledged: no second instance, no second application, no replay twice.
/// </summary>
internal sealed class AmbiguousCommitScenario : FaultScenario
{
    public override string? LeftOutOfShortTier(string backend) => SeveralNodesOnlyInShortTier(backend);

    /// <summary>The share of decorated store writes that fail (FaultInjection:Rate).</summary>
    private const double Rate = 0.05;

    /// <summary>The share of replays that fail (FaultInjection:Operations:ReplayDeadLetter).</summary>
    private const double ReplayRate = 0.5;

    /// <summary>How long a failing call that times out hangs (FaultInjection:Delay).</summary>
    private static readonly TimeSpan Delay = TimeSpan.FromMilliseconds(500);

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var pairs = context.Short ? 200 : 2000;
        var poisoned = context.Short ? 10 : 40;
        await using var nodes = context.CreateNodes(new Dictionary<string, string>
        {
            ["FaultInjection__Rate"] = Rate.ToString(CultureInfo.InvariantCulture),
            ["FaultInjection__Delay"] = Delay.ToString("c", CultureInfo.InvariantCulture),
            // Replays are few (one per dead letter): half of them fail, so that some commit and lose their answer.
            ["FaultInjection__Operations__ReplayDeadLetter"] = ReplayRate.ToString(CultureInfo.InvariantCulture),
            // A poison signal is dead-lettered after two attempts 2 s apart (as in the duplicates row).
            ["Engine__MaxAttempts"] = "2",
            ["Engine__RetryBackoff"] = "00:00:02",
        }, storeFaults: true);
        for (var i = 0; i < nodeCount; i++)
        {
            // Each node its own seeded sequence of failures, so that a row is repeated with the same ones.
            nodes.Configure($"node-{i}", new Dictionary<string, string> { ["FaultInjection__Seed"] = (5 + i).ToString(CultureInfo.InvariantCulture) });
        }

        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        await context.PublishAsync(nodes, PoisonWorkflows.DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: 16);
        var load = new TwoSignalLoad(client, "ambiguous");
        var clock = Stopwatch.StartNew();
        var running = load.RunAsync(8, pairs, () => true, copies: 1, ct);

        // Poison workflows alongside: their failing runs go through the retry (give back) and the fault commit
        // (dead-letter), and each dead letter is then replayed through the same failing store.
        var poison = await PoisonWorkflows.StartAsync(client, poisoned, ct);

        await running;
        var loadTime = clock.Elapsed;
        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation
            {
                MustComplete = load.MustComplete,
                CompletedVersions = TwoSignalLoad.CompletedVersions,
                MayStayFaulted = poison.Select(p => p.Instance).ToHashSet(),
            },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = 0, // counted at the end, from every node's own count
        };

        var replayed = 0;
        if (await Drain.UntilFaultedAsync(context.Backend, poisoned, ct))
        {
            // One replay each, retried with its key through the failing store: a replay committed whose answer was lost
            // must come back 202 on the retry, and must not replay the signal a second time.
            var answers = await Task.WhenAll(poison.Select(p => client.ReplayAsync(p.Instance, p.Signal, $"replay-{p.Signal}", ct)));
            replayed = answers.Count(a => a);
            if (replayed != poisoned)
            {
                outcome.Failures.Add($"{poisoned - replayed} of {poisoned} replays sent once (and retried with their key) were refused (409)");
            }

            if (!await Drain.UntilFaultedAsync(context.Backend, poisoned, ct))
            {
                outcome.Failures.Add("the replayed poison signals were not dead-lettered again within a minute");
            }
        }
        else
        {
            outcome.Failures.Add($"the {poisoned} poison signals were not all dead-lettered within a minute");
        }

        if (await Drain.UntilCompletedAsync(context.Backend, load.MustComplete.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(2), ct) is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete");
        }

        var injected = await ReadInjectedAsync(nodes, ct);
        var ambiguous = injected.Where(f => f.Key.EndsWith("/CommitThenThrow", StringComparison.Ordinal) || f.Key.EndsWith("/CommitThenTimeout", StringComparison.Ordinal))
            .Sum(f => f.Value);
        var total = injected.Values.Sum();
        if (ambiguous == 0)
        {
            outcome.Failures.Add("no write committed and then failed: the row did not test what it is for");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{pairs} workflows and {poisoned} poison workflows on the fault host; {Rate:P0} of the store's writes failed and {ReplayRate:P0} of its replays ({total} in all, {ambiguous} of them after the write had committed); {replayed} dead letters replayed once each with a key. A poison signal's dead-lettering is its fault commit (Commit). Failures by operation and way: {Describe(injected)}"));
        FaultChecks.AddLoadFailures(outcome, load);
        outcome.FaultsInjected = (int)total;
        return outcome;
    }

    /// <summary>The injected failures of every node, by operation and way, summed.</summary>
    private static async Task<SortedDictionary<string, long>> ReadInjectedAsync(ServiceNodes nodes, CancellationToken ct)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var sum = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var node in nodes.All.Where(n => n.IsUp))
        {
            var counts = await http.GetFromJsonAsync<InjectedCounts>(new Uri(node.Process!.Address, "/fault-injection"), ct)
                ?? throw new InvalidOperationException($"{node.Name} did not say what it injected");
            foreach (var (key, value) in counts.ByFault)
            {
                sum[key] = sum.GetValueOrDefault(key) + value;
            }
        }

        return sum;
    }

    private static string Describe(SortedDictionary<string, long> injected) =>
        string.Join(", ", injected.Select(f => string.Create(CultureInfo.InvariantCulture, $"{f.Key.Replace("Async", "", StringComparison.Ordinal)} {f.Value}")));

    private sealed record InjectedCounts(long Injected, long Calls, Dictionary<string, long> ByFault);
}
