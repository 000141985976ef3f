using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.WakeUp;

/// <summary>Wake-ups inside one process: the embedded store's transport, and each node's local fast path.</summary>
public sealed class InProcessWakeUp(TimeProvider time, IStoreClock store) : IWakeUpTransport
{
    private TaskCompletionSource _pending = NewPending();
    private long _plannedWakeMs = long.MaxValue;

    public bool IsHealthy => true;

    public void Notify(long dueAtMs)
    {
        // Only wake the dispatcher when this signal is due before it planned to look again.
        if (dueAtMs <= Interlocked.Read(ref _plannedWakeMs))
        {
            Volatile.Read(ref _pending).TrySetResult();
        }
    }

    public async Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken)
    {
        var current = Volatile.Read(ref _pending);
        Interlocked.Exchange(ref _plannedWakeMs, untilMs);
        var delay = TimeSpan.FromMilliseconds(Math.Max(0, untilMs - store.NowMs()));
        bool notified;
        try
        {
            await current.Task.WaitAsync(delay, time, cancellationToken).ConfigureAwait(false);
            notified = true;
        }
        catch (TimeoutException)
        {
            notified = false;
        }
        finally
        {
            // While the dispatcher works, every notification counts: it must look again before it sleeps.
            Interlocked.Exchange(ref _plannedWakeMs, long.MaxValue);
        }

        // A notification that lands after this swap completes the new source; the caller claims after the swap, so
        // anything committed before an earlier notification is visible to that claim.
        if (current.Task.IsCompleted)
        {
            Interlocked.CompareExchange(ref _pending, NewPending(), current);
        }

        return notified;
    }

    private static TaskCompletionSource NewPending() => new(TaskCreationOptions.RunContinuationsAsynchronously);
}
