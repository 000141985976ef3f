using System.Diagnostics;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 7: early signals at scale. Start-then-signal pairs with 0-50 ms between the two signals: for half of them the
/// second races the run for the first, for the other half it is sent first, before its wait exists; each early one must
/// be parked and applied once.
/// </summary>
internal sealed class EarlySignalScenario : FaultScenario
{
    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var pairs = context.Short ? 1000 : 10_000;
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: 32);
        var load = new TwoSignalLoad(client, "early");
        var clock = Stopwatch.StartNew();
        await load.RunAsync(32, pairs, () => true, copies: 1, reverseOdd: true, ct);
        var loadTime = clock.Elapsed;
        var recovery = await Drain.UntilCompletedAsync(context.Backend, load.MustComplete.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(2), ct);
        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation { MustComplete = load.MustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = pairs,
        };
        if (recovery is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete within two minutes of the last signal");
        }

        outcome.Notes.Add($"{pairs:N0} workflows on 32 workers: start, then 'a', 0-50 ms, 'b' (even ones: 'b' races the run for 'a') or 'b', 0-50 ms, 'a' (odd ones: 'b' arrives before its wait and is parked)");
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }
}
