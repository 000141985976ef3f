namespace WorkflowService.Engine.Persistence;

/// <summary>
/// What the store's database says of its standbys, for /health/ready and the start-up log: whether a commit it
/// acknowledges is on another server too. Registered only by backends whose server can tell.
/// </summary>
public interface IStoreReplication
{
    /// <summary>
    /// One line for operators ("postgres: primary, 1 synchronous standby"), naming settings but never showing a connection
    /// string or a statement; it warns in the log, once per change, when acknowledged writes could be lost on failover.
    /// </summary>
    Task<string> DescribeAsync(CancellationToken cancellationToken);
}
