using System.Diagnostics;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 4: SIGSTOP a node while it holds claims, for twice the lease, then SIGCONT it. Other nodes take its claims over
/// once the leases expire; when it runs again, whatever it was about to commit is stale and must be refused (the lease
/// token), so nothing is applied twice.
/// </summary>
internal sealed class PausedNodeScenario : FaultScenario
{
    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store runs one node: while it is paused no other node can take its claims, so there is no stale commit to refuse"
        : null;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var pauses = context.Short ? 2 : 6;
        var hold = FaultContext.LeaseDuration * 2;
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(3, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var running = new LoadUnderFault(context, nodes, "pause", concurrency: 16);
        var lastFault = Stopwatch.GetTimestamp();
        var heldAtFreeze = new List<int>();
        await using var store = await context.Backend.OpenStoreReaderAsync(ct);
        TimeSpan loadTime;
        try
        {
            for (var p = 0; p < pauses; p++)
            {
                await Task.Delay(TimeSpan.FromSeconds(2), ct);
                var victim = nodes.All[p % nodes.All.Count];
                heldAtFreeze.Add((await ClaimHolding.CutWhileItHoldsClaimsAsync(victim.Name, victim.Freeze, victim.Thaw, store, ct)).Count);
                await Task.Delay(hold, ct);
                victim.Thaw();
                lastFault = Stopwatch.GetTimestamp();
            }

            // Load after the last thaw: the thawed node works on with the others.
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
        }

        var load = running.Load;
        var mustComplete = load.MustComplete;
        var bound = FaultContext.LeaseDuration + FaultContext.PollInterval + TimeSpan.FromSeconds(10);
        var recovery = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, lastFault, bound + TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = 3,
            FaultsInjected = pauses,
            Recovery = recovery,
            RecoveryBound = bound,
        };
        outcome.Notes.Add($"{pauses} pauses (SIGSTOP) of {hold.TotalSeconds:0} s, twice the lease, each while the node held claims (held at the freeze: {string.Join(", ", heldAtFreeze)}); load: 16 workers of start, 'a', 0-50 ms, 'b'");
        FaultChecks.AddLoadFailures(outcome, load);
        FaultChecks.AddRecoveryFailure(outcome);
        return outcome;
    }
}
