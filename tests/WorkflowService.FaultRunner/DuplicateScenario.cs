using System.Diagnostics;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 6: duplicates in the same millisecond. Every start and every signal is sent three times at once with one key
/// (to different nodes where there are several); and every dead letter is replayed by two concurrent calls, of which
/// exactly one may win (202) and the other must be told 409, leaving one queue item.
/// </summary>
internal sealed class DuplicateScenario : FaultScenario
{
    public override string? LeftOutOfShortTier(string backend) => SeveralNodesOnlyInShortTier(backend);

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var pairs = context.Short ? 300 : 2000;
        var poisoned = context.Short ? 10 : 50;
        // A poison signal is dead-lettered after two attempts 2 s apart: a replayed one is dead-lettered again no sooner
        // than 2 s after its replay, so two replays sent at once are concurrent, never one after the other's re-failure.
        await using var nodes = context.CreateNodes(new Dictionary<string, string>
        {
            ["Engine__MaxAttempts"] = "2",
            ["Engine__RetryBackoff"] = "00:00:02",
        });
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        await context.PublishAsync(nodes, PoisonWorkflows.DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: 24);
        var load = new TwoSignalLoad(client, "dup");
        var clock = Stopwatch.StartNew();
        var running = load.RunAsync(8, pairs, () => true, copies: 3, ct);

        // The poison workflows, alongside: each "go" fails every attempt and is dead-lettered.
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
            FaultsInjected = pairs * 2 + poisoned,
        };

        if (!await Drain.UntilFaultedAsync(context.Backend, poisoned, ct))
        {
            outcome.Failures.Add($"the {poisoned} poison signals were not all dead-lettered within a minute");
            return outcome;
        }

        // Two replays of each dead letter at once: one wins.
        var wins = await Task.WhenAll(poison.Select(async p =>
        {
            var answers = await Task.WhenAll(client.ReplayAsync(p.Instance, p.Signal, $"replay-{p.Signal}-1", ct),
                client.ReplayAsync(p.Instance, p.Signal, $"replay-{p.Signal}-2", ct));
            return answers.Count(a => a);
        }));
        var notOne = wins.Count(w => w != 1);
        if (notOne > 0)
        {
            outcome.Failures.Add($"{notOne} of {poisoned} dead letters replayed by two concurrent calls were not replayed exactly once (202 + 409): {string.Join(", ", wins.Where(w => w != 1).Distinct().Select(w => $"{wins.Count(x => x == w)} replayed {w} times"))}");
        }

        // Each replayed signal fails again and is dead-lettered again: one queue item each, never two.
        if (!await Drain.UntilFaultedAsync(context.Backend, poisoned, ct))
        {
            outcome.Failures.Add("the replayed poison signals were not dead-lettered again within a minute");
        }

        var recovery = await Drain.UntilCompletedAsync(context.Backend, load.MustComplete.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(2), ct);
        if (recovery is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete");
        }

        outcome.Notes.Add($"{pairs} workflows with every start and signal sent 3 times at once with one key ({(nodeCount > 1 ? "to different nodes" : "to the one node")}); {poisoned} poison signals dead-lettered after 2 attempts 2 s apart, each replayed by 2 concurrent calls ({wins.Sum()} replays won, {ledger.RefusedAttempts} answered 409)");
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }
}
