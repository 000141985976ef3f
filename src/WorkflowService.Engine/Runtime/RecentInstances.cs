using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The state this node last committed of the instances it wrote most recently (at most
/// <see cref="EngineOptions.RecentInstances"/>, the oldest dropped first), so that a signal arriving for one of them is
/// applied without reading it first. Never trusted: the commit that uses an entry checks its version, and an entry that
/// failed that check is forgotten.
/// </summary>
public sealed class RecentInstances(IOptions<EngineOptions> options)
{
    private readonly ConcurrentDictionary<Guid, WorkflowInstance> _instances = new();
    private readonly ConcurrentQueue<Guid> _order = new();
    private readonly int _capacity = options.Value.RecentInstances;

    /// <summary>A committed state (not to be changed afterwards); an ended instance takes no more signals and is dropped.</summary>
    public void Committed(WorkflowInstance instance)
    {
        if (_capacity == 0)
        {
            return;
        }

        if (instance.Status.IsTerminal())
        {
            _instances.TryRemove(instance.Id, out _);
            return;
        }

        if (_instances.TryAdd(instance.Id, instance))
        {
            _order.Enqueue(instance.Id);
            // The queue bounds the dictionary: an id dropped from it is dropped from both.
            while (_order.Count > _capacity && _order.TryDequeue(out var oldest))
            {
                _instances.TryRemove(oldest, out _);
            }

            return;
        }

        // Keep the newer of two states committed side by side.
        _instances.AddOrUpdate(instance.Id, instance, (_, held) => held.Version > instance.Version ? held : instance);
    }

    /// <summary>The state this node last committed, or null when it holds none.</summary>
    public WorkflowInstance? Find(Guid instanceId) => _instances.TryGetValue(instanceId, out var instance) ? instance : null;

    /// <summary>Drops an entry that proved stale.</summary>
    public void Forget(Guid instanceId) => _instances.TryRemove(instanceId, out _);
}
