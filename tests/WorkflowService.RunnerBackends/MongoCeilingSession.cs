using Microsoft.Extensions.Options;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.MongoDb;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The MongoDB store's writes for one signal-roundtrip workflow, issued by the store itself (<see cref="MongoWorkflowStore"/>)
/// with no engine and no HTTP around it: the start is its creation transaction (the instance and two history documents),
/// the signal its insert-if-open (the instance read, then the signal inserted), the claim its findOneAndUpdate per signal
/// (w:1) with the instances read after it, and the completion its wait-point transaction (the instance replaced at the
/// version read, three history documents, the signal settled under its lease token). The store's own calls rather than
/// a copy of its driver calls: the ceiling is to issue exactly its writes, and a copy could drift from them. Wait points
/// share transactions through the store's own group commit in the grouped ceiling, and are committed one by one
/// (Store:GroupCommitMaxBatch 1) in the plain one; the client is built as a node builds it, with the ceiling's pool.
/// </summary>
internal sealed class MongoCeilingSession(MongoClient client, MongoWorkflowStore store) : CeilingSession
{
    /// <summary>
    /// A session on the run's database, whose collections, indexes and schema document the store creates first (as a
    /// node does at start-up, its clock measured against the primary's too), for a run of the ceiling alone.
    /// </summary>
    public static async Task<CeilingSession> OpenAsync(MongoStoreOptions options, CancellationToken cancellationToken)
    {
        var client = new MongoClient(MongoDbServiceCollectionExtensions.ClientSettings(options));
        try
        {
            var store = new MongoWorkflowStore(client, Options.Create(options), TimeProvider.System);
            await store.InitializeAsync(cancellationToken);
            return new MongoCeilingSession(client, store);
        }
        catch
        {
            client.Dispose();
            throw;
        }
    }

    public override Task StartAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        var commit = new WaitPointCommit { Instance = StartedInstance(instanceId, now), ExpectedVersion = -1 };
        commit.History.AddRange(StartHistory(instanceId, now));
        return store.CreateInstanceAsync(commit, cancellationToken);
    }

    public override async Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken)
    {
        // The default tenant's, as the ceiling's instances are.
        var (signal, _) = await store.EnqueueSignalIfOpenAsync(GoSignal(signalId, instanceId, DateTime.UtcNow), tenant: "", cancellationToken);
        if (signal is null)
        {
            throw new InvalidOperationException($"the signal for {instanceId} was refused: its instance is not open");
        }
    }

    public override Task<IReadOnlyList<ClaimedSignal>> ClaimAsync(string owner, int max, CancellationToken cancellationToken) =>
        store.ClaimDueWorkAsync(owner, max, Lease, cancellationToken);

    public override Task CompleteAsync(ClaimedSignal claimed, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        var signal = claimed.Signal;
        var instance = CompletedInstance(claimed, now);
        // The store's commit checks the version (ConcurrencyConflictException) and the lease (LeaseLostException) itself.
        var commit = new WaitPointCommit { Instance = instance, ExpectedVersion = 1 };
        commit.History.AddRange(CompletionHistory(instance.Id, signal.Id, now));
        commit.SignalTransitions.Add(new SignalTransition(signal.Id, SignalStatus.Handled, signal.LeaseToken));
        return store.CommitAsync(commit, cancellationToken);
    }

    public override async ValueTask DisposeAsync()
    {
        // The store first: its group commit's writers finish what is queued on the client's connections.
        await store.DisposeAsync();
        client.Dispose();
    }
}
