using System.Diagnostics;
using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 3: a network partition between one node and the database. node-2 reaches PostgreSQL through a TCP proxy the
/// runner owns; while node-2 holds claims the proxy stops carrying its bytes for longer than the lease, then heals (what
/// waited is delivered late, as TCP does after a partition). The other nodes take node-2's expired claims over; whatever
/// node-2 then commits late is refused (the lease token and the instance version), so nothing is applied twice; and
/// node-2 takes work again by itself.
/// </summary>
internal sealed class PartitionScenario : FaultScenario
{
    private const string Victim = "node-2";

    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store is a file inside the node's own process: there is no network between them to partition"
        : null;

    /// <summary>The nodes' store call timeout, so that a blackholed call gives up within the partition.</summary>
    private static readonly TimeSpan StoreCallBound = TimeSpan.FromSeconds(5);

    /// <summary>The nodes' Api:RequestTimeout in this row.</summary>
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var partitions = context.Short ? 1 : 3;
        var cut = FaultContext.LeaseDuration * 3;
        var (host, port) = await context.Backend.ReadServerAddressAsync(ct);
        await using var proxy = new FaultProxy(host, port);
        proxy.Start();
        var settings = new Dictionary<string, string>(context.Backend.StoreTimeoutSettings(StoreCallBound))
        {
            ["Api__RequestTimeout"] = RequestTimeout.ToString("c", CultureInfo.InvariantCulture),
        };
        await using var nodes = context.CreateNodes(settings);
        nodes.Configure(Victim, new Dictionary<string, string>
        {
            ["Store__ConnectionString"] = context.Backend.ServiceConnectionStringVia(proxy.Port),
        });
        await nodes.StartAsync(3, ct);
        var victim = nodes.All.Single(n => n.Name == Victim);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var running = new LoadUnderFault(context, nodes, "partition", concurrency: 16);
        await using var store = await context.Backend.OpenStoreReaderAsync(ct);
        var held = new List<Guid>();
        var heldCounts = new List<int>();
        var handledByVictimAtHeal = 0;
        var lastFault = Stopwatch.GetTimestamp();
        TimeSpan loadTime;
        try
        {
            for (var p = 0; p < partitions; p++)
            {
                await Task.Delay(TimeSpan.FromSeconds(3), ct);
                var claims = await ClaimHolding.CutWhileItHoldsClaimsAsync(Victim, proxy.Blackhole, proxy.Heal, store, ct);
                held.AddRange(claims);
                heldCounts.Add(claims.Count);
                await Task.Delay(cut, ct);
                handledByVictimAtHeal = await store.CountHandledByAsync(Victim, ct);
                proxy.Heal();
                lastFault = Stopwatch.GetTimestamp();
            }

            // Load after the heal: node-2 is to take work again by itself.
            await Task.Delay(TimeSpan.FromSeconds(8), ct);
        }
        finally
        {
            proxy.Heal();
            loadTime = await running.StopAsync();
        }

        var load = running.Load;
        var mustComplete = load.MustComplete;
        var bound = FaultContext.LeaseDuration + FaultContext.PollInterval + TimeSpan.FromSeconds(10);
        var recovery = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, lastFault, bound + TimeSpan.FromMinutes(1), ct);
        var takenOver = await CountTakenOverAsync(store, held, ct);
        var handledByVictim = await store.CountHandledByAsync(Victim, ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = 3,
            FaultsInjected = partitions,
            Recovery = recovery,
            RecoveryBound = bound,
        };
        if (held.Count > 0 && takenOver == 0)
        {
            outcome.Failures.Add($"none of the {held.Count} claims {Victim} held when it was cut off was taken over by another node: {await DescribeAsync(store, held, ct)}");
        }

        if (handledByVictim <= handledByVictimAtHeal)
        {
            outcome.Failures.Add($"{Victim} handled no signal after the partition healed: it did not rejoin");
        }

        if (victim.Process is not { HasExited: false })
        {
            outcome.Failures.Add($"{Victim} exited during the partition");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{partitions} partition(s) of {Victim} from the database for {cut.TotalSeconds:0} s (three leases), each while it held claims ({string.Join(", ", heldCounts)}); {takenOver} of those claims were handled by another node; {Victim} handled {handledByVictim - handledByVictimAtHeal} signals after the last heal; store calls bounded by {StoreCallBound.TotalSeconds:0} s, Api:RequestTimeout {RequestTimeout.TotalSeconds:0} s; load: 16 workers of start, 'a', 0-50 ms, 'b'"));
        FaultChecks.AddLoadFailures(outcome, load);
        FaultChecks.AddRecoveryFailure(outcome);
        return outcome;
    }

    /// <summary>Of the claims <see cref="Victim"/> held when it was cut off, how many another node handled.</summary>
    private static async Task<int> CountTakenOverAsync(StoreSnapshotReader store, List<Guid> held, CancellationToken ct) =>
        (await store.ReadSignalsAsync(held, ct)).Count(s => s.Status == "Handled" && s.LeaseOwner != Victim);

    private static async Task<string> DescribeAsync(StoreSnapshotReader store, List<Guid> held, CancellationToken ct) =>
        string.Join("; ", (await store.ReadSignalsAsync(held, ct)).Select(s => $"{s.Id} '{s.Name}' {s.Status} by {s.LeaseOwner ?? "nobody"} after {s.Attempts} attempts"));
}
