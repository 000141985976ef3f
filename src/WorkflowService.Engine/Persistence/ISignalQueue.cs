namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The durable signal queue: signals are queued, leased to a worker (claimed), then handled by the wait point's commit
/// (<see cref="IInstanceStore.CommitAsync"/>), given back for a retry, or dead-lettered; an operator may replay a
/// dead letter. Due times and leases are on the store's clock (<see cref="IStoreClock"/>).
/// </summary>
public interface ISignalQueue
{
    /// <summary>Queues a signal; returns the existing one when its idempotency key was used before for the instance.</summary>
    Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken);
    /// <summary>
    /// Queues a signal only while its instance exists and has not ended, in one round trip; returns a null signal when the
    /// instance is missing, of another tenant than <paramref name="tenant"/>, or ended (the caller reads it to tell which), and
    /// the existing signal for a repeated idempotency key.
    /// </summary>
    Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, string tenant, CancellationToken cancellationToken);
    /// <summary>Leases up to <paramref name="max"/> due signals to <paramref name="owner"/> (attempts incremented).</summary>
    [EngineOnly]
    Task<IReadOnlyList<SignalMessage>> ClaimDueSignalsAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken);
    /// <summary>
    /// <see cref="ClaimDueSignalsAsync"/>, with each signal's instance read as of the claim: one round trip where the
    /// database allows (the workers' claim). In due order.
    /// </summary>
    [EngineOnly]
    Task<IReadOnlyList<ClaimedSignal>> ClaimDueWorkAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken);
    /// <summary>
    /// Holds a claim for another <paramref name="lease"/> from now (store clock), for work that runs longer than a lease;
    /// false when the lease was lost (another claim took the signal, or it was settled).
    /// </summary>
    Task<bool> ExtendLeaseAsync(Guid signalId, long leaseToken, TimeSpan lease, CancellationToken cancellationToken);
    /// <summary>When the next pending signal becomes claimable (Unix ms), or null when none is pending.</summary>
    Task<long?> GetNextDueAsync(CancellationToken cancellationToken);
    /// <summary>Gives a claimed signal back for a later retry; false when the lease was lost.</summary>
    Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken);
    /// <summary>
    /// Gives a claimed signal back, due at <paramref name="dueAtMs"/>, without counting the claim as an attempt: it was
    /// not tried, only found early (it waits for another commit). False when the lease was lost.
    /// </summary>
    Task<bool> DeferSignalAsync(Guid signalId, long leaseToken, long dueAtMs, CancellationToken cancellationToken);
    /// <summary>Dead-letters a claimed signal that cannot be applied to any instance; false when the lease was lost.</summary>
    Task<bool> DeadLetterSignalAsync(Guid signalId, long leaseToken, string error, CancellationToken cancellationToken);
    /// <summary>Releases every lease held by <paramref name="owner"/> (graceful shutdown).</summary>
    Task<int> ReleaseLeasesAsync(string owner, CancellationToken cancellationToken);
    /// <summary>
    /// The signal with this id when it is <paramref name="tenant"/>'s (a signal is its instance's tenant's; one without an
    /// instance the default tenant's); null when there is none, or it is another tenant's.
    /// </summary>
    Task<SignalMessage?> GetSignalAsync(string tenant, Guid signalId, CancellationToken cancellationToken);
    /// <summary>The signal with this id, whatever its tenant: for the engine's own work (a worker checking a signal it holds).</summary>
    [EngineOnly]
    Task<SignalMessage?> GetSignalForEngineAsync(Guid signalId, CancellationToken cancellationToken);
    /// <summary>The signals parked for an instance (arrived before it waited for them), oldest first.</summary>
    [EngineOnly]
    Task<IReadOnlyList<SignalMessage>> GetParkedSignalsAsync(Guid instanceId, CancellationToken cancellationToken);
    /// <summary>
    /// Makes a dead-lettered signal pending again and a faulted instance waiting again, atomically; NotFound (and nothing
    /// changes) when the signal's instance is of another tenant than <paramref name="tenant"/>.
    /// </summary>
    Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, string tenant, HistoryEvent? replayEvent, CancellationToken cancellationToken);
}
