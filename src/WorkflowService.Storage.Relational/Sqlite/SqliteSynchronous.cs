namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>SQLite's synchronous pragma: how far a commit is flushed before it counts.</summary>
public enum SqliteSynchronous
{
    /// <summary>
    /// Durable across a crash of the process alone, in WAL mode: a commit is written to the WAL but flushed to the disk only
    /// at checkpoints, so commits the service already acknowledged can be lost when the machine or its filesystem fails.
    /// </summary>
    Normal,

    /// <summary>Every commit flushed to the disk before it is acknowledged: durable across power loss and a failing filesystem (the default).</summary>
    Full,

    /// <summary>FULL, and the directory is synced too when the journal is deleted.</summary>
    Extra,
}
