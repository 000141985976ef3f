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
    private readonly RecentMap<WorkflowInstance> _instances = new(options.Value.RecentInstances);

    /// <summary>A committed state (not to be changed afterwards); an ended instance takes no more signals and is dropped.</summary>
    public void Committed(WorkflowInstance instance)
    {
        ArgumentNullException.ThrowIfNull(instance);
        if (instance.Status.IsTerminal())
        {
            _instances.Remove(instance.Id);
            return;
        }

        // Of two states committed side by side, the newer stays.
        _instances.Set(instance.Id, instance, static (held, committed) => held.Version > committed.Version);
    }

    /// <summary>The state this node last committed, or null when it holds none.</summary>
    public WorkflowInstance? Find(Guid instanceId) => _instances.TryGet(instanceId, out var instance) ? instance : null;

    /// <summary>Drops an entry that proved stale.</summary>
    public void Forget(Guid instanceId) => _instances.Remove(instanceId);
}
