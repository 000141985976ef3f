namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Everything one run of an instance changed between two wait points, written by the store in a single transaction:
/// the instance row (checked against <see cref="ExpectedVersion"/>), history, new signals and tasks, and the fate of
/// the signals the run consumed.
/// </summary>
public sealed class WaitPointCommit
{
    public required WorkflowInstance Instance { get; init; }
    /// <summary>The version read before the run; -1 for a new instance.</summary>
    public int ExpectedVersion { get; init; }
    public bool IsNew => ExpectedVersion < 0;
    public List<HistoryEvent> History { get; } = [];
    public List<SignalMessage> NewSignals { get; } = [];
    public List<SignalTransition> SignalTransitions { get; } = [];
    public List<HumanTask> NewTasks { get; } = [];
    /// <summary>Open tasks the run closed (the instance ended while waiting for them).</summary>
    public List<Guid> ClosedTasks { get; } = [];
    /// <summary>Set when the instance ended: its other open signals and tasks are closed in the same transaction.</summary>
    public bool CloseOpenWork { get; set; }
    /// <summary>Set on resume after a suspension: every parked signal is queued again, due now, to be applied in turn.</summary>
    public bool RequeueParked { get; set; }
    /// <summary>
    /// Set when a signal is applied where it arrives: the instance is written only while none of its signals is pending
    /// and due, so that the signal never overtakes one queued before it (or one a worker holds). Otherwise the commit
    /// fails as a <see cref="ConcurrencyConflictException"/>, and the signal goes the queued way.
    /// </summary>
    public bool RequireNoDueSignals { get; set; }
    private List<Events.EventDelivery>? _deliveries;

    /// <summary>The events this commit sends to subscriptions, written in its transaction (the outbox); made on first use.</summary>
    public List<Events.EventDelivery> Deliveries => _deliveries ??= [];

    /// <summary>Whether it sends any event (without making the list: most commits of a service without subscriptions send none).</summary>
    public bool HasDeliveries => _deliveries is { Count: > 0 };
    /// <summary>Who caused this commit (an API caller); written on each of its history events that names no one else.</summary>
    public string? Actor { get; set; }
}

/// <summary>A new status for a signal. With a lease token, the update only applies while that claim still holds.</summary>
public sealed record SignalTransition(Guid SignalId, SignalStatus Status, long? LeaseToken, string? Error = null);
