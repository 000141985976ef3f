namespace WorkflowService.Hosting;

/// <summary>Which durable store this node uses ("Store" section).</summary>
public sealed class StoreOptions
{
    public const string Section = "Store";
    public static readonly string[] Providers = ["Sqlite", "PostgreSql"];

    /// <summary>The backend: Sqlite (the embedded default, a file created on first run) or PostgreSql.</summary>
    public string Provider { get; set; } = "Sqlite";

    /// <summary>The backend's connection string; for Sqlite, "Data Source=path/to/file.db".</summary>
    public string ConnectionString { get; set; } = "Data Source=data/workflow.db";

    /// <summary>SQLite's synchronous pragma: NORMAL (durable across process crashes in WAL mode, the default) or FULL (also across power loss).</summary>
    public string SqliteSynchronous { get; set; } = "NORMAL";

    /// <summary>Largest connection pool of a server database (default 20: enough for 8 workers, the API and the listener).</summary>
    public int MaxPoolSize { get; set; } = 20;

    /// <summary>Longest a single database command may run, in seconds (default 30).</summary>
    public int CommandTimeoutSeconds { get; set; } = 30;
}
