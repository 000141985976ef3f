using System.Collections.Concurrent;

namespace WorkflowService.Engine.Runtime;

/// <summary>Tells waiters on this node that an instance's state was committed, so long-polls need no sleep loop.</summary>
public sealed class InstanceChangeFeed
{
    private readonly ConcurrentDictionary<Guid, TaskCompletionSource> _waiters = new();

    /// <summary>Subscribe before reading the state, then await the returned task: no change can slip in between.</summary>
    public Task NextChange(Guid instanceId) =>
        _waiters.GetOrAdd(instanceId, static _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    public void Publish(Guid instanceId)
    {
        if (_waiters.TryRemove(instanceId, out var waiter))
        {
            waiter.TrySetResult();
        }
    }

    /// <summary>Drops the subscription of a waiter that gave up, unless someone replaced it meanwhile.</summary>
    public void Forget(Guid instanceId, Task change)
    {
        if (_waiters.TryGetValue(instanceId, out var waiter) && waiter.Task == change)
        {
            _waiters.TryRemove(new KeyValuePair<Guid, TaskCompletionSource>(instanceId, waiter));
        }
    }
}
