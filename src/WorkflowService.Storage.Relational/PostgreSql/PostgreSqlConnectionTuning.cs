using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>The store's settings on its PostgreSQL connection string (the claim pool derives its own from the result).</summary>
internal static class PostgreSqlConnectionTuning
{

    /// <summary>Sets <paramref name="options"/>' pool size and command timeout, and the store's connection settings, on <paramref name="connection"/>.</summary>
    /// <param name="lease">
    /// How long a claim holds (Workers:LeaseDuration): a session left idle inside a transaction longer than that is ended by
    /// the server. A node cut off from the database mid-commit otherwise keeps its row locks (the server cannot tell a
    /// partition from a slow client) and the other nodes cannot take its expired claims over until TCP gives up, hours later.
    /// </param>
    public static NpgsqlConnectionStringBuilder Apply(NpgsqlConnectionStringBuilder connection, PostgreSqlStoreOptions options, TimeSpan? lease = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(options);
        connection.MaxPoolSize = options.MaxPoolSize;
        connection.CommandTimeout = options.CommandTimeoutSeconds;
        // Waiting for a connection (from the pool, or a new one) takes no longer than a command may: while the database
        // does not answer, a request fails within about two command timeouts, and is told to try again (503).
        connection.Timeout = Math.Min(connection.Timeout, options.CommandTimeoutSeconds);
        // The store keeps no session state on pooled connections: skip the DISCARD ALL round trip on every return.
        connection.NoResetOnClose = true;
        // The hot path repeats a handful of statements: let the server keep their plans (prepared per connection),
        // unless the connection string chose otherwise.
        if (connection.MaxAutoPrepare == 0)
        {
            connection.MaxAutoPrepare = 32;
            connection.AutoPrepareMinUsages = 2;
        }

        if (lease is { } holds && !(connection.Options?.Contains("idle_in_transaction_session_timeout", StringComparison.Ordinal) ?? false))
        {
            var timeout = $"-c idle_in_transaction_session_timeout={(long)Math.Ceiling(holds.TotalMilliseconds)}";
            connection.Options = string.IsNullOrWhiteSpace(connection.Options) ? timeout : connection.Options + " " + timeout;
        }

        return connection;
    }
}
