using System.Collections.Concurrent;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Tells waiters on this node that an instance's state changed, handing them the new state so that a long-poll needs
/// neither a sleep loop nor another read. This node's commits are published as they happen; other nodes' commits are
/// found by <see cref="InstanceChangeWatcher"/>, which reads every watched instance in one query per recheck period
/// (not one read per waiter).
/// </summary>
public sealed class InstanceChangeFeed
{
    private readonly ConcurrentDictionary<Guid, Watch> _waiters = new();
    private readonly ConcurrentQueue<Guid> _hinted = new();
    private TaskCompletionSource _hint = NewHint();

    /// <summary>How many instances are waited on now.</summary>
    public int Watched => _waiters.Count;

    /// <summary>
    /// Subscribe before reading the state, then tell <see cref="Observed"/> the version read and await the returned
    /// task: no change can slip in between. The task's result is the new state, or null when the instance is gone.
    /// </summary>
    public Task<WorkflowInstance?> NextChange(Guid instanceId)
    {
        while (true)
        {
            var watch = _waiters.GetOrAdd(instanceId, static _ => new Watch());
            if (watch.TryJoin())
            {
                return watch.Changed.Task;
            }

            // Its last waiter has just given up: it is on its way out of the dictionary.
            _waiters.TryRemove(new KeyValuePair<Guid, Watch>(instanceId, watch));
        }
    }

    /// <summary>
    /// The version a waiter of <paramref name="change"/> holds: the watcher wakes the waiters when the stored version
    /// is newer than the oldest version they hold.
    /// </summary>
    public void Observed(Guid instanceId, Task<WorkflowInstance?> change, int version)
    {
        if (_waiters.TryGetValue(instanceId, out var watch) && watch.Changed.Task == change)
        {
            watch.Hold(version);
        }
    }

    /// <summary>Publishes a committed state; waiters get a copy of their own (made only when someone waits).</summary>
    public void Publish(WorkflowInstance committed)
    {
        if (_waiters.TryRemove(committed.Id, out var watch))
        {
            watch.Changed.TrySetResult(committed.Clone());
        }
    }

    /// <summary>
    /// A waiter of <paramref name="change"/> gives up; the subscription is dropped with its last waiter (others waiting on
    /// the same instance keep it).
    /// </summary>
    public void Forget(Guid instanceId, Task change)
    {
        if (_waiters.TryGetValue(instanceId, out var watch) && watch.Changed.Task == change && watch.Leave())
        {
            _waiters.TryRemove(new KeyValuePair<Guid, Watch>(instanceId, watch));
        }
    }

    /// <summary>
    /// Another node says <paramref name="instanceId"/> committed: when it is waited on here, the watcher reads it at
    /// once (with the other hints that arrived meanwhile) instead of at its next period.
    /// </summary>
    public void Hint(Guid instanceId)
    {
        if (_waiters.ContainsKey(instanceId))
        {
            _hinted.Enqueue(instanceId);
            Volatile.Read(ref _hint).TrySetResult();
        }
    }

    /// <summary>Completes when a hint arrives (at once if one arrived since the last <see cref="TakeHinted"/>).</summary>
    internal Task HintArrived => Volatile.Read(ref _hint).Task;

    /// <summary>The hinted instances still waited on, each once; the next hint completes a fresh <see cref="HintArrived"/>.</summary>
    internal List<Guid> TakeHinted()
    {
        // Swapped before draining: a hint queued after the drain completes the new task.
        Interlocked.Exchange(ref _hint, NewHint());
        var hinted = new HashSet<Guid>();
        while (_hinted.TryDequeue(out var id))
        {
            if (_waiters.TryGetValue(id, out var watch) && watch.Version >= 0)
            {
                hinted.Add(id);
            }
        }

        return [.. hinted];
    }

    private static TaskCompletionSource NewHint() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>The watched instances whose waiters have told the version they hold (the ones a read can compare).</summary>
    internal List<Guid> ToRecheck() => [.. _waiters.Where(w => w.Value.Version >= 0).Select(w => w.Key)];

    /// <summary>
    /// What a recheck read of <paramref name="ids"/> found (<paramref name="stored"/>, without the ones that are gone):
    /// wakes the waiters of each instance whose version is newer than the one they hold, and of each instance gone.
    /// </summary>
    internal void Recheck(IReadOnlyCollection<Guid> ids, IReadOnlyList<WorkflowInstance> stored)
    {
        var found = new HashSet<Guid>();
        foreach (var instance in stored)
        {
            found.Add(instance.Id);
            if (_waiters.TryGetValue(instance.Id, out var watch) && watch.Version >= 0 && instance.Version > watch.Version
                && _waiters.TryRemove(new KeyValuePair<Guid, Watch>(instance.Id, watch)))
            {
                watch.Changed.TrySetResult(instance);
            }
        }

        foreach (var id in ids)
        {
            if (!found.Contains(id) && _waiters.TryGetValue(id, out var watch) && watch.Version >= 0
                && _waiters.TryRemove(new KeyValuePair<Guid, Watch>(id, watch)))
            {
                watch.Changed.TrySetResult(null);
            }
        }
    }

    private sealed class Watch
    {
        private int _version = -1;
        private int _waiters;

        public TaskCompletionSource<WorkflowInstance?> Changed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>The oldest version its waiters hold; -1 until the first has read.</summary>
        public int Version => Volatile.Read(ref _version);

        /// <summary>One more waiter; false once the last one has left (the watch is closed).</summary>
        public bool TryJoin()
        {
            while (true)
            {
                var count = Volatile.Read(ref _waiters);
                if (count < 0)
                {
                    return false;
                }

                if (Interlocked.CompareExchange(ref _waiters, count + 1, count) == count)
                {
                    return true;
                }
            }
        }

        /// <summary>One waiter fewer; true when it was the last (the watch is closed).</summary>
        public bool Leave()
        {
            while (true)
            {
                var count = Volatile.Read(ref _waiters);
                var next = count <= 1 ? -1 : count - 1;
                if (Interlocked.CompareExchange(ref _waiters, next, count) == count)
                {
                    return next < 0;
                }
            }
        }

        public void Hold(int version)
        {
            while (true)
            {
                var current = Volatile.Read(ref _version);
                if ((current >= 0 && current <= version) || Interlocked.CompareExchange(ref _version, version, current) == current)
                {
                    return;
                }
            }
        }
    }
}
