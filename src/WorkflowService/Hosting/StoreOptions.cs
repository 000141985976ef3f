namespace WorkflowService.Hosting;

/// <summary>Which durable store this node uses ("Store" section).</summary>
public sealed class StoreOptions
{
    public const string Section = "Store";
    public static readonly string[] Providers = ["Sqlite"];

    /// <summary>The backend: Sqlite (the embedded default, a file created on first run).</summary>
    public string Provider { get; set; } = "Sqlite";

    /// <summary>The backend's connection string; for Sqlite, "Data Source=path/to/file.db".</summary>
    public string ConnectionString { get; set; } = "Data Source=data/workflow.db";

    /// <summary>SQLite's synchronous pragma: NORMAL (durable across process crashes in WAL mode, the default) or FULL (also across power loss).</summary>
    public string SqliteSynchronous { get; set; } = "NORMAL";
}
