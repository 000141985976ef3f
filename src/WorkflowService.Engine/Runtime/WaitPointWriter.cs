using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Logging;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The one path by which the engine's changes become durable and visible: it writes a wait point, hands the committed
/// state to this node's long-polls, and announces whatever the write queued. The writes that queue a signal without a
/// wait point (a signal accepted, a task completed, a retry, a deferral, a replay) go through it too. Each is announced
/// here, from what was written, once the store has committed it: a write cannot forget its wake-up, none announces
/// one before its commit, and a wake-up that fails fails no write (it is a hint; the poll finds the signal).
/// </summary>
public sealed partial class WaitPointWriter(IInstanceStore store, ISignalQueue signals, ITaskStore tasks, IStoreClock clock,
    InstanceChangeFeed changes, RecentInstances recent, Search.RecentSearchValues searchValues, IWakeUpTransport wakeUp, EngineMetrics metrics,
    EventOutbox outbox, ILogger<WaitPointWriter> logger)
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

    private void Stamp(WaitPointCommit commit)
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

        // A retried write (a conflict, a lost group) is stamped again: its events are collected afresh, never twice.
        if (commit.HasDeliveries)
        {
            commit.Deliveries.Clear();
        }

        if (!outbox.IsIdle)
        {
            outbox.Collect(commit, clock.NowMs(), EngineTelemetry.CurrentTraceParent());
        }
    }

    /// <summary>
    /// Queues a signal while its instance is open (<see cref="ISignalQueue.EnqueueSignalIfOpenAsync"/>); announced when
    /// it was created. Pooled: a signal accepted allocates no state machine for it.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<(SignalMessage? Signal, bool Created)> QueueSignalIfOpenAsync(SignalMessage signal, string tenant,
        CancellationToken cancellationToken)
    {
        var (stored, created) = await signals.EnqueueSignalIfOpenAsync(signal, tenant, cancellationToken).ConfigureAwait(false);
        if (created && stored is not null)
        {
            Announce(committed: null, stored.DueAtMs);
        }

        return (stored, created);
    }

    /// <summary>Gives a claimed signal back, due at <paramref name="dueAtMs"/>, for a retry; announced when the lease still held.</summary>
    public async Task<bool> ReleaseSignalAsync(SignalMessage signal, long dueAtMs, string? error, CancellationToken cancellationToken)
    {
        var released = await signals.ReleaseSignalAsync(signal.Id, signal.LeaseToken, dueAtMs, error, cancellationToken).ConfigureAwait(false);
        if (released)
        {
            Announce(committed: null, dueAtMs);
        }

        return released;
    }

    /// <summary>
    /// Gives a claimed signal back, due at <paramref name="dueAtMs"/>, without counting the claim as an attempt
    /// (<see cref="ISignalQueue.DeferSignalAsync"/>); announced when the lease still held.
    /// </summary>
    public async Task<bool> DeferSignalAsync(SignalMessage signal, long dueAtMs, CancellationToken cancellationToken)
    {
        var deferred = await signals.DeferSignalAsync(signal.Id, signal.LeaseToken, dueAtMs, cancellationToken).ConfigureAwait(false);
        if (deferred)
        {
            Announce(committed: null, dueAtMs);
        }

        return deferred;
    }

    /// <summary>Queues a dead-lettered signal again (<see cref="ISignalQueue.ReplayDeadLetterAsync"/>); announced, due now, when replayed.</summary>
    public async Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, string tenant, HistoryEvent? replayEvent, CancellationToken cancellationToken)
    {
        var outcome = await signals.ReplayDeadLetterAsync(signalId, tenant, replayEvent, cancellationToken).ConfigureAwait(false);
        if (outcome == ReplayOutcome.Replayed)
        {
            Announce(committed: null, clock.NowMs());
        }

        return outcome;
    }

    /// <summary>Completes a task and queues <paramref name="resume"/> (<see cref="ITaskStore.CompleteTaskAsync"/>); announced when completed.</summary>
    public async Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(resume);
        var outcome = await tasks.CompleteTaskAsync(taskId, user, resultJson, resume, cancellationToken).ConfigureAwait(false);
        if (outcome == TaskCompletionOutcome.Completed)
        {
            Announce(committed: null, resume.DueAtMs);
        }

        return outcome;
    }

    private void Published(WaitPointCommit commit)
    {
        outbox.Committed(commit);
        // Before the long-polls hear of it: their views take the values from here.
        searchValues.Committed(commit);
        changes.Publish(commit.Instance);
        recent.Committed(commit.Instance);
        long? due = commit.RequeueParked ? clock.NowMs() : null;
        foreach (var signal in commit.NewSignals)
        {
            // A signal applied on arrival is written handled: no worker needs waking for it.
            if (signal.Status == SignalStatus.Pending && (due is null || signal.DueAtMs < due))
            {
                due = signal.DueAtMs;
            }
        }

        Announce(commit.Instance.Id, due);
    }

    /// <summary>
    /// Tells the wake-up transport what a committed write did: <paramref name="committed"/>'s state changed (for
    /// long-polls on other nodes), and a signal is due at <paramref name="dueAtMs"/> (store clock), when given.
    /// </summary>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A wake-up is a hint sent after the commit: whatever the transport throws must not turn a committed write into a failed one; the poll finds the signal.")]
    private void Announce(Guid? committed, long? dueAtMs)
    {
        try
        {
            if (committed is { } instanceId)
            {
                wakeUp.Committed(instanceId);
            }

            if (dueAtMs is { } due)
            {
                wakeUp.Notify(due);
            }
        }
        catch (Exception e)
        {
            LogAnnounceFailed(logger, e);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "A wake-up could not be sent after a commit; the workers find its signal at their next poll")]
    private static partial void LogAnnounceFailed(ILogger logger, Exception exception);
}
