namespace WorkflowService.RunnerBackends;

/// <summary>An instance row as the checker needs it.</summary>
internal sealed record StoredInstance(
    Guid Id, string Status, string? WaitKind, string? WaitSignal, Guid? WaitSignalId, int Version, int HistoryLength, string? IdempotencyKey);

/// <summary>A signal row as the checker needs it; its lease owner and attempts for the rows that ask who handled it.</summary>
internal sealed record StoredSignal(Guid Id, Guid InstanceId, string Name, string Status, string? IdempotencyKey, string? LeaseOwner = null, int Attempts = 0);

/// <summary>An outbox row (one event on its way to one subscription): its status, attempts and live lease owner, if any.</summary>
internal sealed record StoredDelivery(Guid Id, Guid InstanceId, string Type, string Status, int Attempts, string? LeaseOwner);

/// <summary>A history event (the relational stores' rows expanded); <see cref="SignalId"/> is the signalId its data names, if any.</summary>
internal sealed record StoredEvent(Guid InstanceId, int Sequence, DateTime At, string Type, Guid? SignalId);

/// <summary>What the store holds after a fault run, read directly from its tables (not through the service).</summary>
internal sealed record StoreSnapshot(IReadOnlyList<StoredInstance> Instances, IReadOnlyList<StoredSignal> Signals, IReadOnlyList<StoredEvent> History);
