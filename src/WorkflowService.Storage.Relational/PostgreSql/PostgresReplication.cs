using Microsoft.Extensions.Logging;
using Npgsql;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// Asks the store's server how its commits are replicated (<see cref="PostgresReplicationState"/>), on a connection of
/// the store's pool, so that synchronous_commit is the one the store's writes run with. Warns once per change when
/// acknowledged writes could be lost on failover.
/// </summary>
internal sealed partial class PostgresReplication(NpgsqlDataSource dataSource, ILogger<PostgresReplication> logger) : IStoreReplication
{
    // One round trip; a role without pg_monitor sees the standbys' rows but not their sync_state.
    private const string Question = """
        SELECT pg_is_in_recovery(), current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
               count(r.pid)::int,
               (count(r.pid) FILTER (WHERE r.sync_state IN ('sync', 'quorum')))::int,
               (count(r.pid) FILTER (WHERE r.sync_state IS NULL))::int
          FROM (SELECT 1) AS one LEFT JOIN pg_stat_replication AS r ON true
        """;

    private readonly Lock _gate = new();
    private string? _warnedFor;

    public async Task<string> DescribeAsync(CancellationToken cancellationToken)
    {
        var state = await ReadAsync(cancellationToken).ConfigureAwait(false);
        Warn(state);
        return state.Describe();
    }

    internal async Task<PostgresReplicationState> ReadAsync(CancellationToken cancellationToken)
    {
        await using var command = dataSource.CreateCommand(Question);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        return new PostgresReplicationState(reader.GetBoolean(0), reader.GetString(1), reader.GetString(2),
            reader.GetInt32(3), reader.GetInt32(4), reader.GetInt32(5));
    }

    /// <summary>One warning when the risk appears or changes its cause; none again while it stays the same.</summary>
    private void Warn(PostgresReplicationState state)
    {
        var setting = state.SettingThatLosesWrites;
        lock (_gate)
        {
            if (setting == _warnedFor)
            {
                return;
            }

            _warnedFor = setting;
        }

        if (setting is not null)
        {
            LogWritesCanBeLost(logger, setting, state.Describe());
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Acknowledged writes can be lost on a failover of the PostgreSQL store: set {Setting} so that a standby confirms every commit ({Replication}); see docs/high-availability.md")]
    private static partial void LogWritesCanBeLost(ILogger logger, string setting, string replication);
}
