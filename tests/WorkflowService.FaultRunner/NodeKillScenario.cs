using System.Diagnostics;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 1: under load, SIGKILL a random node every few seconds and start it again at once; then restart every node in
/// turn (SIGTERM, start). Every acknowledged workflow completes exactly once, and the backlog drains within
/// lease + poll + 10 s of the last fault. On the embedded store the one node is the victim each time.
/// </summary>
internal sealed class NodeKillScenario : FaultScenario
{
    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var kills = context.Short ? 3 : 10;
        var every = TimeSpan.FromSeconds(context.SeveralNodes ? 4 : 6);
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var running = new LoadUnderFault(context, nodes, "kill", concurrency: 16);
        var lastFault = Stopwatch.GetTimestamp();
        var injected = 0;
        TimeSpan loadTime;
        var lastStop = 0L;
        try
        {
            for (var k = 0; k < kills; k++)
            {
                // The fault schedule: a kill every few seconds of load.
                await Task.Delay(every, ct);
                var up = nodes.All.Where(n => n.IsUp).ToList();
                var victim = up[context.Random.Next(up.Count)];
                await victim.KillAsync();
                lastFault = Stopwatch.GetTimestamp();
                injected++;
                await nodes.StartAsync(victim, ct);
            }

            // Rolling restarts: each node stopped gracefully (it releases its claims) and started again, one at a time.
            foreach (var node in nodes.All)
            {
                await Task.Delay(every / 2, ct);
                await node.StopAsync();
                lastStop = Stopwatch.GetTimestamp();
                injected++;
                await nodes.StartAsync(node, ct);
                // A restart ends when its node is back: how long a process takes to start on a saturated machine is
                // not the engine's backlog (seen at 7 to 12 s with three nodes and the load on two cores).
                lastFault = Stopwatch.GetTimestamp();
            }
        }
        finally
        {
            loadTime = await running.StopAsync();
        }

        var loadStopped = Stopwatch.GetTimestamp();

        var load = running.Load;
        var bound = FaultContext.LeaseDuration + FaultContext.PollInterval + TimeSpan.FromSeconds(10);
        var mustComplete = load.MustComplete;
        var recovery = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, lastFault, bound + TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = injected,
            Recovery = recovery,
            RecoveryBound = bound,
        };
        outcome.Notes.Add(string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"the last restarted node was ready again {Stopwatch.GetElapsedTime(lastStop, lastFault).TotalSeconds:0.0} s after its stop (recovery counts from then); the load's pairs under way finished {Stopwatch.GetElapsedTime(lastFault, loadStopped).TotalSeconds:0.0} s later"));
        outcome.Notes.Add($"{kills} SIGKILLs {every.TotalSeconds:0} s apart (each node started again at once), then {nodeCount} graceful restart{(nodeCount == 1 ? string.Empty : "s, one node at a time")}; load: 16 workers of start, 'a', 0-50 ms, 'b'");
        FaultChecks.AddLoadFailures(outcome, load);
        FaultChecks.AddRecoveryFailure(outcome);
        return outcome;
    }
}
