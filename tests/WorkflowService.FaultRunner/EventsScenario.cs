using System.Diagnostics;
using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>What an events row does to the outbox's path while the load runs.</summary>
internal enum EventFault
{
    /// <summary>The receiver stops listening (connections refused), then listens again.</summary>
    ReceiverDown,

    /// <summary>A node is SIGKILLed while it holds delivery leases, its requests at the (slow) receiver under way.</summary>
    DispatcherKill,

    /// <summary>The database is stopped, then started again.</summary>
    DatabaseStop,
}

/// <summary>
/// Fault 12: the outbox under a fault. Every node runs the dispatcher; one subscription to every event of the load's
/// definition points at a <see cref="WebhookReceiver"/> in the runner. The load runs, the fault strikes, the load stops,
/// and the receiver's record is checked against the store (<see cref="EventLedgerCheck"/>): every event of a commit that
/// happened arrived, signed, none for a commit that did not, in commit order per instance, duplicates no more than the
/// retried attempts.
/// </summary>
internal sealed class EventsScenario : FaultScenario
{
    /// <summary>How long the events of the run may take to arrive after the load and the fault are over.</summary>
    private static readonly TimeSpan DeliveredWithin = TimeSpan.FromMinutes(2);

    private static readonly TimeSpan StoreCallBound = TimeSpan.FromSeconds(5);

    public required EventFault Fault { get; init; }

    public override bool OwnsDatabaseServer(string backend) => Fault == EventFault.DatabaseStop && backend == "postgres";

    public override string? NotApplicable(string backend) => (Fault, backend) switch
    {
        (EventFault.DatabaseStop, "sqlite") =>
            "the embedded store is a file inside the service's own process: there is no server to stop (its failures are fault 11)",
        (EventFault.DatabaseStop, "mongodb") =>
            "the runner cannot own a MongoDB replica set to stop (it would have to start mongod); fault 2 covers the nodes' side through a proxy",
        (EventFault.DispatcherKill, "sqlite") =>
            "the embedded store runs one node: there is no other node to take its leased deliveries over",
        _ => null,
    };

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        await using var receiver = await WebhookReceiver.StartAsync(ct);
        var settings = new Dictionary<string, string>(receiver.ServiceSettings)
        {
            ["Events__LeaseDuration"] = FaultContext.LeaseDuration.ToString("c", CultureInfo.InvariantCulture),
            ["Events__AttemptTimeout"] = "00:00:02",
            ["Events__FirstRetryDelay"] = "00:00:00.200",
            ["Events__MaxRetryDelay"] = "00:00:02",
        };
        if (Fault == EventFault.DatabaseStop)
        {
            foreach (var (key, value) in context.Backend.StoreTimeoutSettings(StoreCallBound))
            {
                settings[key] = value;
            }

            settings["Api__RequestTimeout"] = TimeSpan.FromSeconds(10).ToString("c", CultureInfo.InvariantCulture);
        }

        var nodeCount = !context.SeveralNodes ? 1 : Fault == EventFault.DispatcherKill ? 3 : 2;
        await using var nodes = context.CreateNodes(settings);
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        var probes = await SubscribeAsync(context, nodes, receiver);

        using var running = new LoadUnderFault(context, nodes, $"events-{Fault}", concurrency: 16);
        var notes = new List<string>();
        var held = new List<Guid>();
        TimeSpan loadTime;
        long lastFault;
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            lastFault = await InjectAsync(context, nodes, receiver, held, notes);
            // Load after the fault: the path it struck carries events again.
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
        }
        finally
        {
            await receiver.ComeBackAsync(CancellationToken.None);
            loadTime = await running.StopAsync();
        }

        // Opened after the fault: a connection from before a stopped database is gone.
        await using var store = await context.Backend.OpenStoreReaderAsync(ct);
        var load = running.Load;
        var mustComplete = load.MustComplete;
        var bound = FaultContext.LeaseDuration + FaultContext.PollInterval + TimeSpan.FromSeconds(10);
        var recovery = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, lastFault, bound + TimeSpan.FromMinutes(1), ct);
        var check = await EventLedgerCheck.UntilDeliveredAsync(store, receiver, probes, DeliveredWithin, ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = 1,
            Recovery = recovery,
            RecoveryBound = bound,
        };
        outcome.Failures.AddRange(check.Failures);
        if (held.Count > 0)
        {
            await AddTakeOverFailureAsync(outcome, store, held, ct);
        }

        outcome.Notes.AddRange(notes);
        outcome.Notes.Add(check.Summary(lastFault));
        FaultChecks.AddLoadFailures(outcome, load);
        FaultChecks.AddRecoveryFailure(outcome);
        return outcome;
    }

    /// <summary>Strikes; returns when the fault ended (a stopwatch timestamp).</summary>
    private async Task<long> InjectAsync(FaultContext context, ServiceNodes nodes, WebhookReceiver receiver, List<Guid> held, List<string> notes)
    {
        var ct = context.Cancellation;
        switch (Fault)
        {
            case EventFault.ReceiverDown:
                var down = TimeSpan.FromSeconds(context.Short ? 10 : 60);
                await receiver.GoDownAsync();
                await Task.Delay(down, ct);
                await receiver.ComeBackAsync(ct);
                notes.Add(string.Create(CultureInfo.InvariantCulture,
                    $"the receiver refused connections for {down.TotalSeconds:0} s under load, then listened again; retries from 0.2 s doubling to 2 s"));
                return Stopwatch.GetTimestamp();

            case EventFault.DispatcherKill:
                // A slow receiver keeps every node's deliveries in flight, so the kill strikes mid-delivery.
                receiver.AnswerDelay = TimeSpan.FromMilliseconds(300);
                var victim = nodes.All[1];
                await using (var store = await context.Backend.OpenStoreReaderAsync(ct))
                {
                    held.AddRange(await ClaimHolding.CutWhileItHoldsAsync(victim.Name, victim.Freeze, victim.Thaw,
                        c => store.DeliveriesHeldAsync(victim.Name, c), ct));
                }

                await victim.KillAsync();
                var killed = Stopwatch.GetTimestamp();
                receiver.AnswerDelay = TimeSpan.Zero;
                notes.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{victim.Name} SIGKILLed while it held {held.Count} delivery lease(s), the receiver answering after 300 ms; it stays down, so only the other nodes can deliver them"));
                return killed;

            default:
                var outage = TimeSpan.FromSeconds(context.Short ? 10 : 30);
                await context.Server!.StopAsync(ct);
                await Task.Delay(outage, ct);
                var back = Stopwatch.GetTimestamp();
                await context.Server.StartAgainAsync(ct);
                notes.Add(string.Create(CultureInfo.InvariantCulture, $"the database stopped for {outage.TotalSeconds:0} s under load, then started again"));
                return back;
        }
    }

    /// <summary>The leases the killed node held: each delivered later, after its lease ran out, so by another node.</summary>
    private static async Task AddTakeOverFailureAsync(FaultOutcome outcome, StoreSnapshotReader store, List<Guid> held, CancellationToken ct)
    {
        var rows = (await store.ReadDeliveriesAsync(ct)).Where(d => held.Contains(d.Id)).ToList();
        var notTaken = rows.Where(d => d.Status != "Delivered" || d.Attempts < 2).ToList();
        if (notTaken.Count > 0 || rows.Count != held.Count)
        {
            outcome.Failures.Add($"{notTaken.Count + held.Count - rows.Count} of the {held.Count} deliveries the killed node held were not delivered by another node: "
                + string.Join("; ", notTaken.Take(5).Select(d => $"{d.Id} {d.Type} {d.Status} after {d.Attempts} attempts")));
        }
    }

    /// <summary>
    /// Subscribes the receiver to every event of the load's definition, then makes sure every node knows it before the load:
    /// each node starts a probe instance until the receiver hears of one (a node that has not read the subscription yet
    /// writes no event). Returns the probes, which the check leaves out.
    /// </summary>
    private static async Task<IReadOnlySet<Guid>> SubscribeAsync(FaultContext context, ServiceNodes nodes, WebhookReceiver receiver)
    {
        var ct = context.Cancellation;
        using (var client = new WorkflowClient(nodes.NextAddress()!, 1, context.ApiKey.Key))
        {
            var subscription = await client.SubscribeAsync("fault-receiver", receiver.Url, [TwoSignalLoad.Definition], ct);
            receiver.UseSecret((string)subscription["secret"]!);
        }

        var clients = nodes.All.Select(n => new WorkflowClient(n.Process!.Address, 1, context.ApiKey.Key)).ToList();
        try
        {
            return await receiver.ProbeEveryNodeAsync(clients, TwoSignalLoad.Definition, new { n = -1 }, ct);
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }
}
