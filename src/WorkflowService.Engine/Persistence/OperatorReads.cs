namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The key of the <see cref="IOperatorQueries"/> for reads that may be a little stale (operators' lists, counts, search,
/// the console): a backend configured with a read-only server (a standby) serves them there, any other from the store.
/// A read a write depends on, and an instance's own read, take the unkeyed store instead.
/// </summary>
public static class OperatorReads
{
    public const string MayBeStale = "operator-reads-may-be-stale";
}
