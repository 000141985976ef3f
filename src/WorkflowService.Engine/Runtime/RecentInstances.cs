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
    // Each entry holds the sequence number of its slot in the queue: a slot left behind by an entry since dropped (an
    // instance ended, or a guess that proved stale) evicts nothing added after it.
    private readonly ConcurrentDictionary<Guid, (WorkflowInstance Instance, long Slot)> _instances = new();
    private readonly ConcurrentQueue<(Guid Id, long Slot)> _order = new();
    private readonly int _capacity = options.Value.RecentInstances;
    private long _slots;

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

        var slot = Interlocked.Increment(ref _slots);
        if (_instances.TryAdd(instance.Id, (instance, slot)))
        {
            _order.Enqueue((instance.Id, slot));
            // The queue bounds the dictionary: the entry of the oldest slot goes with it, if it is still that slot's.
            while (_order.Count > _capacity && _order.TryDequeue(out var oldest))
            {
                if (_instances.TryGetValue(oldest.Id, out var held) && held.Slot == oldest.Slot)
                {
                    // Only if it is still the same entry: one replaced meanwhile stays.
                    _instances.TryRemove(KeyValuePair.Create(oldest.Id, held));
                }
            }

            return;
        }

        // Keep the newer of two states committed side by side, in the slot it has.
        _instances.AddOrUpdate(instance.Id, (instance, slot), (_, held) => held.Instance.Version > instance.Version ? held : (instance, held.Slot));
    }

    /// <summary>The state this node last committed, or null when it holds none.</summary>
    public WorkflowInstance? Find(Guid instanceId) => _instances.TryGetValue(instanceId, out var entry) ? entry.Instance : null;

    /// <summary>Drops an entry that proved stale.</summary>
    public void Forget(Guid instanceId) => _instances.TryRemove(instanceId, out _);
}
