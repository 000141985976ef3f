using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The one path by which the engine's changes become durable and visible: it writes a wait point, hands the committed
/// state to this node's long-polls, and sends the wake-up for whatever the write queued. Queue changes that are not
/// wait points (a signal accepted, a task completed, a retry or a replay scheduled) send their wake-up through it too.
/// </summary>
public sealed class WaitPointWriter(IInstanceStore store, IStoreClock clock, InstanceChangeFeed changes, RecentInstances recent,
    IWakeUpTransport wakeUp, EngineMetrics metrics)
{
    /// <summary>
    /// Writes a new instance at its first wait point (or its end). <paramref name="committed"/> runs after the write
    /// and before anyone hears of it (a counter that a client who saw the change must see too).
    /// </summary>
    /// <exception cref="DuplicateInstanceException">Its idempotency or business key is taken.</exception>
    public async Task CreateAsync<TState>(WaitPointCommit commit, Action<TState> committed, TState state, CancellationToken cancellationToken)
    {
        await WriteAsync(commit, static (store, commit, ct) => store.CreateInstanceAsync(commit, ct), cancellationToken).ConfigureAwait(false);
        committed(state);
        Published(commit);
    }

    /// <summary>Writes a wait point of an existing instance.</summary>
    /// <exception cref="ConcurrencyConflictException">The instance changed since it was read.</exception>
    /// <exception cref="LeaseLostException">The consumed signal's lease was lost.</exception>
    public Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        CommitAsync(commit, static _ => { }, 0, cancellationToken);

    /// <summary>
    /// <see cref="CommitAsync(WaitPointCommit, CancellationToken)"/>, with <paramref name="committed"/> run after the
    /// write and before anyone hears of it. The state argument keeps the hot path free of a closure per signal.
    /// </summary>
    public async Task CommitAsync<TState>(WaitPointCommit commit, Action<TState> committed, TState state, CancellationToken cancellationToken)
    {
        await WriteAsync(commit, static (store, commit, ct) => store.CommitAsync(commit, ct), cancellationToken).ConfigureAwait(false);
        committed(state);
        Published(commit);
    }

    /// <summary>
    /// The write itself, in its span and timed, with the caller's actor on every history entry and the trace it runs in
    /// on every signal it queues (a request's, or the run's), which the run that handles the signal continues.
    /// </summary>
    private async Task WriteAsync(WaitPointCommit commit, Func<IInstanceStore, WaitPointCommit, CancellationToken, Task> write, CancellationToken cancellationToken)
    {
        Stamp(commit);
        using var span = EngineTelemetry.StartCommit(commit);
        var writing = System.Diagnostics.Stopwatch.GetTimestamp();
        try
        {
            await write(store, commit, cancellationToken).ConfigureAwait(false);
            metrics.Committed(System.Diagnostics.Stopwatch.GetElapsedTime(writing).TotalMilliseconds);
        }
        catch (Exception e)
        {
            EngineTelemetry.Failed(span, e.GetType().Name);
            throw;
        }
    }

    private static void Stamp(WaitPointCommit commit)
    {
        if (commit.Actor is not null)
        {
            foreach (var entry in commit.History)
            {
                entry.Actor ??= commit.Actor;
            }
        }

        if (commit.NewSignals.Count > 0 && EngineTelemetry.CurrentTraceParent() is { } trace)
        {
            foreach (var signal in commit.NewSignals)
            {
                signal.TraceParent ??= trace;
            }
        }
    }

    /// <summary>A signal became due at <paramref name="dueAtMs"/> (store clock) outside a wait-point write.</summary>
    public void SignalQueued(long dueAtMs) => wakeUp.Notify(dueAtMs);

    private void Published(WaitPointCommit commit)
    {
        changes.Publish(commit.Instance);
        recent.Committed(commit.Instance);
        wakeUp.Committed(commit.Instance.Id);
        long? due = commit.RequeueParked ? clock.NowMs() : null;
        foreach (var signal in commit.NewSignals)
        {
            // A signal applied on arrival is written handled: no worker needs waking for it.
            if (signal.Status == SignalStatus.Pending && (due is null || signal.DueAtMs < due))
            {
                due = signal.DueAtMs;
            }
        }

        if (due is { } earliest)
        {
            wakeUp.Notify(earliest);
        }
    }
}
