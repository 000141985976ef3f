using System.Data.Common;
using Microsoft.EntityFrameworkCore.Diagnostics;

namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>Applies the per-connection settings SQLite does not take from its connection string.</summary>
public sealed class SqlitePragmaInterceptor(string synchronous) : DbConnectionInterceptor
{
    private readonly string _pragmas = $"PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;";

    public override void ConnectionOpened(DbConnection connection, ConnectionEndEventData eventData)
    {
        using var command = connection.CreateCommand();
        command.CommandText = _pragmas;
        command.ExecuteNonQuery();
    }

    public override async Task ConnectionOpenedAsync(DbConnection connection, ConnectionEndEventData eventData, CancellationToken cancellationToken = default)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = _pragmas;
        await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
    }
}
