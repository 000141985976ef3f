using System.Data.Common;
using Microsoft.Data.Sqlite;

namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>The embedded SQLite store's settings (the "Store" section).</summary>
public sealed class SqliteStoreOptions : RelationalStoreOptions
{
    /// <summary>The configuration key of <see cref="Synchronous"/>.</summary>
    public const string SynchronousKey = "SqliteSynchronous";

    /// <summary>A file created on first run, beside the service.</summary>
    public SqliteStoreOptions() => ConnectionString = "Data Source=data/workflow.db";

    /// <summary>
    /// SQLite's synchronous pragma (key <c>SqliteSynchronous</c>): Full (the default: what the service acknowledges is on
    /// the disk), Extra, or Normal (faster; acknowledged commits can be lost when the machine or its filesystem fails).
    /// </summary>
    public SqliteSynchronous Synchronous { get; set; } = SqliteSynchronous.Full;

    protected override DbConnectionStringBuilder CreateConnectionStringBuilder() => new SqliteConnectionStringBuilder();
}
