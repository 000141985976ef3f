namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Marks a store read that ignores tenants: for the engine's own work (a worker resuming the instance of a signal it
/// claimed, the change watcher, retention), never for a tenant's request. A tenant's request reads through the reads that
/// take the tenant, or an instance read in it; an architecture test keeps the host's endpoints off the reads marked so.
/// </summary>
[AttributeUsage(AttributeTargets.Method, Inherited = false)]
public sealed class EngineOnlyAttribute : Attribute;
