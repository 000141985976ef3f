using System.Data.Common;
using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>The PostgreSQL store's settings (the "Store" section).</summary>
public sealed class PostgreSqlStoreOptions : RelationalStoreOptions
{
    protected override DbConnectionStringBuilder CreateConnectionStringBuilder() => new NpgsqlConnectionStringBuilder();
}
