using System.Collections.Concurrent;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Tells waiters on this node that an instance's state was committed, handing them the committed state so that a
/// long-poll needs neither a sleep loop nor another read.
/// </summary>
public sealed class InstanceChangeFeed
{
    private readonly ConcurrentDictionary<Guid, TaskCompletionSource<WorkflowInstance>> _waiters = new();

    /// <summary>Subscribe before reading the state, then await the returned task: no change can slip in between.</summary>
    public Task<WorkflowInstance> NextChange(Guid instanceId) =>
        _waiters.GetOrAdd(instanceId, static _ => new TaskCompletionSource<WorkflowInstance>(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    /// <summary>Publishes a committed state; waiters get a copy of their own (made only when someone waits).</summary>
    public void Publish(WorkflowInstance committed)
    {
        if (_waiters.TryRemove(committed.Id, out var waiter))
        {
            waiter.TrySetResult(committed.Clone());
        }
    }

    /// <summary>Drops the subscription of a waiter that gave up, unless someone replaced it meanwhile.</summary>
    public void Forget(Guid instanceId, Task change)
    {
        if (_waiters.TryGetValue(instanceId, out var waiter) && waiter.Task == change)
        {
            _waiters.TryRemove(new KeyValuePair<Guid, TaskCompletionSource<WorkflowInstance>>(instanceId, waiter));
        }
    }
}
