namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Deleting ended instances once their retention period is over: the store's half of the retention job. Ended means
/// Completed, Failed or Cancelled; a Faulted instance waits for a replay and is never deleted.
/// </summary>
public interface IRetentionStore
{
    /// <summary>
    /// Takes the named lease for <paramref name="owner"/> until <paramref name="duration"/> from now, or renews it when the
    /// owner holds it already; false while another owner's lease runs. One node at a time runs a job that holds it.
    /// </summary>
    Task<bool> TryTakeLeaseAsync(string name, string owner, TimeSpan duration, CancellationToken cancellationToken);

    /// <summary>Gives the lease up early, when <paramref name="owner"/> holds it.</summary>
    Task ReleaseLeaseAsync(string name, string owner, CancellationToken cancellationToken);

    /// <summary>The ids of ended instances in <paramref name="scope"/>, the longest-ended first, at most <paramref name="limit"/>.</summary>
    Task<IReadOnlyList<Guid>> FindExpiredAsync(RetentionScope scope, int limit, CancellationToken cancellationToken);

    /// <summary>How many ended instances <paramref name="scope"/> holds (a dry run's answer).</summary>
    Task<long> CountExpiredAsync(RetentionScope scope, CancellationToken cancellationToken);

    /// <summary>The instances with everything that belongs to them, for an archive written before they are deleted.</summary>
    [EngineOnly]
    Task<IReadOnlyList<ArchivedInstance>> ReadForArchiveAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken);

    /// <summary>
    /// Deletes the instances that have ended among <paramref name="instanceIds"/>, with their history, signals, tasks and
    /// event deliveries, in one transaction; an instance that has not ended is left alone.
    /// </summary>
    Task<PurgedRows> DeleteEndedAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken);

    /// <summary>
    /// Deletes at most <paramref name="limit"/> deliveries that were delivered before <paramref name="deliveredBefore"/>,
    /// whatever their instance's state; pending and dead-lettered ones stay. Returns how many it deleted.
    /// </summary>
    Task<int> DeleteDeliveredAsync(DateTime deliveredBefore, int limit, CancellationToken cancellationToken);

    /// <summary>How many deliveries were delivered before <paramref name="deliveredBefore"/> (a dry run's answer).</summary>
    Task<long> CountDeliveredAsync(DateTime deliveredBefore, CancellationToken cancellationToken);
}

/// <summary>
/// Which ended instances are due: those that ended before <paramref name="EndedBefore"/>, of <paramref name="Definition"/>
/// only, or (when it is null) of every definition but <paramref name="ExceptDefinitions"/> (which have periods of their own).
/// </summary>
public sealed record RetentionScope(DateTime EndedBefore, string? Definition, IReadOnlyCollection<string> ExceptDefinitions);

/// <summary>The rows one deletion removed, per table (<paramref name="Deliveries"/>: the outbox's, wf_deliveries).</summary>
public readonly record struct PurgedRows(int Instances, int History, int Signals, int Tasks, int Deliveries)
{
    public int Total => Instances + History + Signals + Tasks + Deliveries;

    public static PurgedRows operator +(PurgedRows a, PurgedRows b) =>
        new(a.Instances + b.Instances, a.History + b.History, a.Signals + b.Signals, a.Tasks + b.Tasks, a.Deliveries + b.Deliveries);

    public static PurgedRows Add(PurgedRows a, PurgedRows b) => a + b;
}

/// <summary>An ended instance with its history, signals, tasks and event deliveries, as the archive keeps it.</summary>
public sealed record ArchivedInstance(
    WorkflowInstance Instance,
    IReadOnlyList<HistoryEvent> History,
    IReadOnlyList<SignalMessage> Signals,
    IReadOnlyList<HumanTask> Tasks,
    IReadOnlyList<Events.EventDelivery> Deliveries);
