namespace WorkflowService.Hosting;

/// <summary>How a node learns that signals became due (WakeUp:Transport).</summary>
public enum WakeUpTransport
{
    /// <summary>The store's own: InProcess for Sqlite, PostgresNotify for PostgreSql, MongoChangeStream for MongoDb.</summary>
    Auto,

    /// <summary>Within this process only (one node).</summary>
    InProcess,

    /// <summary>LISTEN/NOTIFY across nodes; needs the PostgreSql store.</summary>
    PostgresNotify,

    /// <summary>A change stream on the MongoDB store's signals and instances, across nodes; needs the MongoDb store.</summary>
    MongoChangeStream,

    /// <summary>Redis pub/sub across nodes (WakeUp:Redis:ConnectionString), with any store.</summary>
    Redis,
}
