using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore.Diagnostics;

namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>
/// Applies the per-connection settings SQLite does not take from its connection string, once per native connection:
/// Microsoft.Data.Sqlite pools native connections, and their settings outlive each open.
/// </summary>
[SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The pragma text is constant but for the synchronous mode, the name of an enum value from the configuration, never request input.")]
public sealed class SqlitePragmaInterceptor(string synchronous) : DbConnectionInterceptor
{
    private readonly string _pragmas = Pragmas(synchronous);
    private readonly ConditionalWeakTable<object, object> _applied = [];

    public override void ConnectionOpened(DbConnection connection, ConnectionEndEventData eventData)
    {
        if (NeedsPragmas(connection))
        {
            using var command = connection.CreateCommand();
            command.CommandText = _pragmas;
            command.ExecuteNonQuery();
        }
    }

    public override async Task ConnectionOpenedAsync(DbConnection connection, ConnectionEndEventData eventData, CancellationToken cancellationToken = default)
    {
        if (NeedsPragmas(connection))
        {
            await using var command = connection.CreateCommand();
            command.CommandText = _pragmas;
            await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The settings run on each new native connection, with SQLite's synchronous pragma set to <paramref name="synchronous"/>.</summary>
    internal static string Pragmas(string synchronous) => $"PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;";

    private bool NeedsPragmas(DbConnection connection) =>
        connection is not SqliteConnection { Handle: { } handle } || _applied.TryAdd(handle, handle);
}
