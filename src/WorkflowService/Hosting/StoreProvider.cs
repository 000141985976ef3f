namespace WorkflowService.Hosting;

/// <summary>The durable store a node uses (Store:Provider).</summary>
public enum StoreProvider
{
    /// <summary>The embedded default: a SQLite file created on first run.</summary>
    Sqlite,

    /// <summary>A PostgreSQL server, shared by every node.</summary>
    PostgreSql,

    /// <summary>A MongoDB replica set, shared by every node (transactions and change streams need a replica set).</summary>
    MongoDb,
}
