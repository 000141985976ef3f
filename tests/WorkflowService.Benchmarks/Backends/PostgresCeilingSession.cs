using Npgsql;
using NpgsqlTypes;

namespace WorkflowService.Benchmarks.Backends;

/// <summary>
/// The engine's transactions for one workflow on PostgreSQL, as plain Npgsql batches (one round trip each). Like the
/// service, the claim joins the instance it will run and commits on connections whose sessions do not wait for the WAL
/// flush (<paramref name="claims"/>); every other transaction waits for it.
/// </summary>
internal sealed class PostgresCeilingSession(NpgsqlDataSource dataSource, NpgsqlDataSource claims) : ICeilingSession
{
    // The claim statement of src/WorkflowService.Storage.Relational/PostgreSql/PostgreSqlDialect.cs (ClaimWithInstancesSql),
    // with a batch of one.
    private const string ClaimSql = """
        WITH claimed AS (
        UPDATE wf_signals AS s
           SET lease_owner = $1, lease_token = $2, lease_until_ms = $4, attempts = s.attempts + 1
          FROM (SELECT id FROM wf_signals
                 WHERE status = 'Pending' AND due_at_ms <= $3
                   AND (lease_until_ms IS NULL OR lease_until_ms < $3)
                 ORDER BY due_at_ms
                 LIMIT 1
                 FOR UPDATE SKIP LOCKED) AS due
         WHERE s.id = due.id
        RETURNING s.*)
        SELECT c.*, i.* FROM claimed AS c LEFT JOIN wf_instances AS i ON i.id = c.instance_id
        """;

    public async Task StartAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        await using var connection = await dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        await using var batch = new NpgsqlBatch(connection, transaction)
        {
            BatchCommands =
            {
                Command("""
                    INSERT INTO wf_instances (id, definition_name, definition_version, status, variables_json, wait_kind, wait_step_id,
                                              wait_signal, parked_signals, version, history_length, created_at, updated_at)
                    VALUES ($1, 'ceiling', 1, 'Waiting', '{}', 'Signal', 'wait-go', 'go', 0, 1, 2, $2, $2)
                    """, instanceId, now),
                Command("""
                    INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
                    VALUES ($1, 0, $2, 'InstanceStarted', NULL, '{"definition":"ceiling","version":1}'),
                           ($1, 1, $2, 'WaitStarted', 'wait-go', '{"signal":"go"}')
                    """, instanceId, now),
            },
        };
        await batch.ExecuteNonQueryAsync(cancellationToken);
        await transaction.CommitAsync(cancellationToken);
    }

    public async Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        await using var command = dataSource.CreateCommand("""
            INSERT INTO wf_signals (id, instance_id, name, payload_json, status, due_at_ms, attempts, lease_token, created_at)
            SELECT $1, $2, 'go', '{"value":1}', 'Pending', $3, 0, 0, $4
             WHERE EXISTS (SELECT 1 FROM wf_instances WHERE id = $2 AND status NOT IN ('Completed', 'Failed', 'Cancelled'))
            """);
        command.Parameters.Add(new NpgsqlParameter { Value = signalId });
        command.Parameters.Add(new NpgsqlParameter { Value = instanceId });
        command.Parameters.Add(new NpgsqlParameter { Value = new DateTimeOffset(now).ToUnixTimeMilliseconds() });
        command.Parameters.Add(new NpgsqlParameter { Value = now, NpgsqlDbType = NpgsqlDbType.TimestampTz });
        await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public async Task<ClaimedSignal?> ClaimAsync(string owner, CancellationToken cancellationToken)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        await using var command = claims.CreateCommand(ClaimSql);
        command.Parameters.Add(new NpgsqlParameter { Value = owner });
        command.Parameters.Add(new NpgsqlParameter { Value = token });
        command.Parameters.Add(new NpgsqlParameter { Value = now });
        command.Parameters.Add(new NpgsqlParameter { Value = now + 30_000 });
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        if (!await reader.ReadAsync(cancellationToken))
        {
            return null;
        }

        // The service materialises the signal and its instance: read every column, as it does.
        var row = new object[reader.FieldCount];
        reader.GetValues(row);
        return new ClaimedSignal((Guid)row[reader.GetOrdinal("id")], (Guid)row[reader.GetOrdinal("instance_id")], token);
    }

    public async Task CompleteAsync(ClaimedSignal signal, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        await using var connection = await dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        await using var batch = new NpgsqlBatch(connection, transaction)
        {
            BatchCommands =
            {
                Command("""
                    UPDATE wf_instances
                       SET status = 'Completed', variables_json = '{"go":{"value":1},"result":{"value":1}}',
                           output_json = '{"result":{"value":1}}', wait_kind = NULL, wait_step_id = NULL, wait_signal = NULL,
                           version = 2, history_length = 5, updated_at = $2, completed_at = $2
                     WHERE id = $1 AND version = 1
                    """, signal.InstanceId, now),
                Command("""
                    UPDATE wf_signals SET status = 'Handled', lease_until_ms = NULL, handled_at = $3
                     WHERE id = $1 AND lease_token = $2
                    """, signal.SignalId, signal.LeaseToken, now),
                Command("""
                    INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
                    VALUES ($1, 2, $2, 'SignalReceived', 'wait-go', $3),
                           ($1, 3, $2, 'StepCompleted', 'assign', NULL),
                           ($1, 4, $2, 'InstanceCompleted', 'done', NULL)
                    """, signal.InstanceId, now, $"{{\"signal\":\"go\",\"signalId\":\"{signal.SignalId}\"}}"),
            },
        };
        await using (var reader = await batch.ExecuteReaderAsync(cancellationToken))
        {
            while (await reader.NextResultAsync(cancellationToken))
            {
            }
        }

        if (batch.BatchCommands[0].RecordsAffected != 1 || batch.BatchCommands[1].RecordsAffected != 1)
        {
            throw new InvalidOperationException($"the completion of {signal.InstanceId} matched no row (version or lease lost)");
        }

        await transaction.CommitAsync(cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        await claims.DisposeAsync();
        await dataSource.DisposeAsync();
    }

    private static NpgsqlBatchCommand Command(string sql, params object[] values)
    {
        var command = new NpgsqlBatchCommand(sql);
        foreach (var value in values)
        {
            command.Parameters.Add(value is DateTime
                ? new NpgsqlParameter { Value = value, NpgsqlDbType = NpgsqlDbType.TimestampTz }
                : new NpgsqlParameter { Value = value });
        }

        return command;
    }
}
