namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>SQLite's synchronous pragma: how far a commit is flushed before it counts.</summary>
public enum SqliteSynchronous
{
    /// <summary>Durable across process crashes in WAL mode (the default).</summary>
    Normal,

    /// <summary>Also durable across power loss.</summary>
    Full,

    /// <summary>FULL, and the directory is synced too when the journal is deleted.</summary>
    Extra,
}
