namespace WorkflowService.RunnerBackends;

/// <summary>
/// Reads the store's tables or collections directly with the backend's own driver (<see cref="SqlStoreSnapshotReader"/>,
/// <see cref="MongoStoreSnapshotReader"/>), not through the service: the checker must not trust the code it checks, and
/// the service may be the thing at fault. Opened by <see cref="Backend.OpenStoreReaderAsync"/>.
/// </summary>
internal abstract class StoreSnapshotReader : IAsyncDisposable
{
    /// <summary>Every instance, signal and history event, as the checker needs them.</summary>
    public abstract Task<StoreSnapshot> ReadAsync(CancellationToken cancellationToken);

    /// <summary>How many instances are in each status (to wait for a backlog to drain without asking the service).</summary>
    public abstract Task<IReadOnlyDictionary<string, int>> CountByStatusAsync(CancellationToken cancellationToken);

    /// <summary>How many signals are in <paramref name="status"/>.</summary>
    public abstract Task<int> CountSignalsAsync(string status, CancellationToken cancellationToken);

    /// <summary>How many signals <paramref name="owner"/> handled (Handled, its lease owner).</summary>
    public abstract Task<int> CountHandledByAsync(string owner, CancellationToken cancellationToken);

    /// <summary>The signals <paramref name="node"/> holds a live claim on (pending, leased, owned by it).</summary>
    public abstract Task<IReadOnlyList<Guid>> ClaimsHeldAsync(string node, CancellationToken cancellationToken);

    /// <summary>The signals of <paramref name="ids"/> (those that exist).</summary>
    public abstract Task<IReadOnlyList<StoredSignal>> ReadSignalsAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken);

    /// <summary>Every event delivery (the outbox) with its status and attempts.</summary>
    public abstract Task<IReadOnlyList<StoredDelivery>> ReadDeliveriesAsync(CancellationToken cancellationToken);

    /// <summary>The deliveries <paramref name="node"/> holds a live lease on (pending, leased, owned by it).</summary>
    public abstract Task<IReadOnlyList<Guid>> DeliveriesHeldAsync(string node, CancellationToken cancellationToken);

    /// <summary>
    /// For every signal named <paramref name="signalName"/>, its due time beside the time of each <paramref name="eventType"/>
    /// event (at <paramref name="stepId"/>, when given) of its instance: when it was due, and when it took effect.
    /// </summary>
    public abstract Task<IReadOnlyList<(long DueAtMs, DateTime At)>> ReadDueAndFiredAsync(string signalName, string eventType, string? stepId,
        CancellationToken cancellationToken);

    /// <summary>Every instance a schedule started (its idempotency key begins <c>schedule:</c>), with when the store created it.</summary>
    public abstract Task<IReadOnlyList<ScheduledStart>> ReadScheduledStartsAsync(CancellationToken cancellationToken);

    /// <summary>Every signal whose name begins <paramref name="namePrefix"/>: its instance, name and when the store accepted it.</summary>
    public abstract Task<IReadOnlyList<(Guid InstanceId, string Name, DateTime CreatedAt)>> ReadSignalArrivalsAsync(string namePrefix,
        CancellationToken cancellationToken);

    /// <summary>Every history event of <paramref name="eventType"/>: its instance, time and data (JSON).</summary>
    public abstract Task<IReadOnlyList<(Guid InstanceId, DateTime At, string? DataJson)>> ReadEventsAsync(string eventType, CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();

    /// <summary>The signal id a history event's data names (a received, parked, replayed or faulting signal's), if any.</summary>
    protected static Guid? SignalIdOf(string type, string? data)
    {
        if (data is null || type is not ("SignalReceived" or "SignalParked" or "InstanceReplayed" or "InstanceFaulted"))
        {
            return null;
        }

        using var json = System.Text.Json.JsonDocument.Parse(data);
        return json.RootElement.TryGetProperty("signalId", out var id) && id.TryGetGuid(out var guid) ? guid : null;
    }
}
