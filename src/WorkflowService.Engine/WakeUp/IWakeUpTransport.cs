namespace WorkflowService.Engine.WakeUp;

/// <summary>
/// Hints between nodes: signals became due (wakes the workers), instances committed (wakes the long-polls waiting on
/// them). Losing one only delays work until the next bounded poll or long-poll re-check: the store, not the transport,
/// is the source of truth.
/// </summary>
public interface IWakeUpTransport
{
    /// <summary>Says that a signal due at <paramref name="dueAtMs"/> (store clock, Unix ms) was committed.</summary>
    void Notify(long dueAtMs);

    /// <summary>
    /// Says that <paramref name="instanceId"/>'s state was committed, for long-polls on other nodes. Nothing to do for a
    /// transport within one process: the node's own long-polls already got the state.
    /// </summary>
    void Committed(Guid instanceId)
    {
    }

    /// <summary>
    /// Waits until a notification for work due by <paramref name="untilMs"/> arrives, or that time comes, or the due time
    /// of an earlier notification that came while the dispatcher planned to look later. Returns true when notified; false
    /// when a time came (the dispatcher then looks up what is due next).
    /// </summary>
    Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken);

    /// <summary>True while notifications are delivered; false means the node runs on the poll alone.</summary>
    bool IsHealthy { get; }

    /// <summary>True once the transport stopped trying to recover: the node needs replacing.</summary>
    bool HasGivenUp => false;

    /// <summary>Wake-ups this node asked to send to other nodes (0 for an in-process transport).</summary>
    long NotificationsRequested => 0;

    /// <summary>Wake-ups actually sent to other nodes: fewer than requested when they were coalesced.</summary>
    long NotificationsSent => 0;
}
