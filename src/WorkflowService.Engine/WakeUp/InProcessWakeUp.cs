using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.WakeUp;

/// <summary>Wake-ups inside one process: the embedded store's transport, and each node's local fast path.</summary>
public sealed class InProcessWakeUp(TimeProvider time, IStoreClock store) : IWakeUpTransport
{
    private TaskCompletionSource _pending = NewPending();
    private long _plannedWakeMs = long.MaxValue;
    private long _setAsideMs = long.MaxValue;

    public bool IsHealthy => true;

    public void Notify(long dueAtMs)
    {
        // Only wake the dispatcher when this signal is due before it planned to look again.
        if (dueAtMs <= Interlocked.Read(ref _plannedWakeMs))
        {
            Volatile.Read(ref _pending).TrySetResult();
            return;
        }

        // Due later than that: the earliest such time is kept, and the dispatcher's waits end by it, whatever else brings
        // the dispatcher to look meanwhile (a claim that finds some work does not look up what is due next).
        long seen;
        while (dueAtMs < (seen = Interlocked.Read(ref _setAsideMs)) && Interlocked.CompareExchange(ref _setAsideMs, dueAtMs, seen) != seen)
        {
        }
    }

    /// <summary>
    /// The earliest due time a notification announced that did not wake the dispatcher, until a wait reaches it
    /// (<see cref="long.MaxValue"/>: none).
    /// </summary>
    public long SetAsideMs => Interlocked.Read(ref _setAsideMs);

    public async Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken)
    {
        var current = Volatile.Read(ref _pending);
        var setAside = Interlocked.Read(ref _setAsideMs);
        untilMs = Math.Min(untilMs, setAside);
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

        // Reached: the dispatcher's next claim takes that work, and its look-up after a timed-out wait what comes after.
        if (setAside != long.MaxValue && setAside <= store.NowMs())
        {
            Interlocked.CompareExchange(ref _setAsideMs, long.MaxValue, setAside);
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
