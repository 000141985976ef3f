using WorkflowService.Engine.Persistence;

namespace WorkflowService.FaultHost;

/// <summary>
/// The signal queue with its writes (queueing, claiming, extending a lease, giving back, dead-lettering, replaying) failing as the injector
/// decides; reads and the shutdown's release of leases go through.
/// </summary>
internal sealed class FaultySignalQueue(ISignalQueue inner, StoreFaultInjector faults) : ISignalQueue
{
    public Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(EnqueueSignalAsync), () => inner.EnqueueSignalAsync(signal, cancellationToken), cancellationToken);

    public Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, string tenant, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(EnqueueSignalIfOpenAsync), () => inner.EnqueueSignalIfOpenAsync(signal, tenant, cancellationToken), cancellationToken);

    public Task<IReadOnlyList<SignalMessage>> ClaimDueSignalsAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(ClaimDueSignalsAsync), () => inner.ClaimDueSignalsAsync(owner, max, lease, cancellationToken), cancellationToken);

    public Task<IReadOnlyList<ClaimedSignal>> ClaimDueWorkAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(ClaimDueWorkAsync), () => inner.ClaimDueWorkAsync(owner, max, lease, cancellationToken), cancellationToken);

    public Task<bool> ExtendLeaseAsync(Guid signalId, long leaseToken, TimeSpan lease, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(ExtendLeaseAsync), () => inner.ExtendLeaseAsync(signalId, leaseToken, lease, cancellationToken), cancellationToken);

    public Task<long?> GetNextDueAsync(CancellationToken cancellationToken) => inner.GetNextDueAsync(cancellationToken);

    public Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(ReleaseSignalAsync), () => inner.ReleaseSignalAsync(signalId, leaseToken, dueAtMs, error, cancellationToken), cancellationToken);

    public Task<bool> DeferSignalAsync(Guid signalId, long leaseToken, long dueAtMs, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(DeferSignalAsync), () => inner.DeferSignalAsync(signalId, leaseToken, dueAtMs, cancellationToken), cancellationToken);

    public Task<bool> DeadLetterSignalAsync(Guid signalId, long leaseToken, string error, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(DeadLetterSignalAsync), () => inner.DeadLetterSignalAsync(signalId, leaseToken, error, cancellationToken), cancellationToken);

    public Task<int> ReleaseLeasesAsync(string owner, CancellationToken cancellationToken) => inner.ReleaseLeasesAsync(owner, cancellationToken);

    public Task<SignalMessage?> GetSignalAsync(string tenant, Guid signalId, CancellationToken cancellationToken) =>
        inner.GetSignalAsync(tenant, signalId, cancellationToken);

    public Task<SignalMessage?> GetSignalForEngineAsync(Guid signalId, CancellationToken cancellationToken) =>
        inner.GetSignalForEngineAsync(signalId, cancellationToken);

    public Task<IReadOnlyList<SignalMessage>> GetParkedSignalsAsync(Guid instanceId, CancellationToken cancellationToken) =>
        inner.GetParkedSignalsAsync(instanceId, cancellationToken);

    public Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, string tenant, HistoryEvent? replayEvent, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(ReplayDeadLetterAsync), () => inner.ReplayDeadLetterAsync(signalId, tenant, replayEvent, cancellationToken), cancellationToken);
}
