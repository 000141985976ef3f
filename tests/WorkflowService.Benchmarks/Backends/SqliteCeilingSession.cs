using System.Globalization;
using Microsoft.Data.Sqlite;

namespace WorkflowService.Benchmarks.Backends;

/// <summary>
/// The engine's transactions for one workflow on SQLite, as plain Microsoft.Data.Sqlite commands: pooled connections
/// with the service's per-connection pragmas, writes serialised by one in-process gate as the store does.
/// </summary>
internal sealed class SqliteCeilingSession(string connectionString) : ICeilingSession
{
    // The claim statement of src/WorkflowService.Storage.Relational/Sqlite/SqliteDialect.cs, with a batch of one.
    private const string ClaimSql = """
        UPDATE wf_signals
           SET lease_owner = $owner, lease_token = $token, lease_until_ms = $until, attempts = attempts + 1
         WHERE id IN (SELECT id FROM wf_signals
                       WHERE status = 'Pending' AND due_at_ms <= $now
                         AND (lease_until_ms IS NULL OR lease_until_ms < $now)
                       ORDER BY due_at_ms
                       LIMIT 1)
        RETURNING *
        """;

    private readonly SemaphoreSlim _writer = new(1, 1);

    public Task StartAsync(Guid instanceId, CancellationToken cancellationToken) => WriteAsync(async (connection, transaction) =>
    {
        var now = Timestamp(DateTime.UtcNow);
        await ExecuteAsync(connection, transaction, """
            INSERT INTO wf_instances (id, definition_name, definition_version, status, variables_json, wait_kind, wait_step_id,
                                      wait_signal, parked_signals, version, history_length, created_at, updated_at)
            VALUES ($id, 'ceiling', 1, 'Waiting', '{}', 'Signal', 'wait-go', 'go', 0, 1, 2, $now, $now);
            INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
            VALUES ($id, 0, $now, 'InstanceStarted', NULL, '{"definition":"ceiling","version":1}'),
                   ($id, 1, $now, 'WaitStarted', 'wait-go', '{"signal":"go"}');
            """, ("$id", Text(instanceId)), ("$now", now));
        return 0;
    }, transactional: true, cancellationToken);

    public Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken) => WriteAsync(async (connection, transaction) =>
    {
        var now = DateTime.UtcNow;
        await ExecuteAsync(connection, transaction, """
            INSERT INTO wf_signals (id, instance_id, name, payload_json, status, due_at_ms, attempts, lease_token, created_at)
            SELECT $id, $instance, 'go', '{"value":1}', 'Pending', $due, 0, 0, $now
             WHERE EXISTS (SELECT 1 FROM wf_instances WHERE id = $instance AND status NOT IN ('Completed', 'Failed', 'Cancelled'))
            """, ("$id", Text(signalId)), ("$instance", Text(instanceId)),
            ("$due", new DateTimeOffset(now).ToUnixTimeMilliseconds()), ("$now", Timestamp(now)));
        return 0;
    }, transactional: false, cancellationToken);

    public Task<ClaimedSignal?> ClaimAsync(string owner, CancellationToken cancellationToken) => WriteAsync(async (connection, transaction) =>
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        await using var command = Command(connection, transaction, ClaimSql,
            ("$owner", owner), ("$token", token), ("$now", now), ("$until", now + 30_000));
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await reader.ReadAsync(cancellationToken)
            ? new ClaimedSignal(Guid.Parse(reader.GetString(reader.GetOrdinal("id"))), Guid.Parse(reader.GetString(reader.GetOrdinal("instance_id"))), token)
            : null;
    }, transactional: false, cancellationToken);

    public Task CompleteAsync(ClaimedSignal signal, CancellationToken cancellationToken) => WriteAsync(async (connection, transaction) =>
    {
        var now = Timestamp(DateTime.UtcNow);
        var instance = await ExecuteAsync(connection, transaction, """
            UPDATE wf_instances
               SET status = 'Completed', variables_json = '{"go":{"value":1},"result":{"value":1}}',
                   output_json = '{"result":{"value":1}}', wait_kind = NULL, wait_step_id = NULL, wait_signal = NULL,
                   version = 2, history_length = 5, updated_at = $now, completed_at = $now
             WHERE id = $id AND version = 1
            """, ("$id", Text(signal.InstanceId)), ("$now", now));
        var handled = await ExecuteAsync(connection, transaction, """
            UPDATE wf_signals SET status = 'Handled', lease_until_ms = NULL, handled_at = $now WHERE id = $id AND lease_token = $token
            """, ("$id", Text(signal.SignalId)), ("$token", signal.LeaseToken), ("$now", now));
        if (instance != 1 || handled != 1)
        {
            throw new InvalidOperationException($"the completion of {signal.InstanceId} matched no row (version or lease lost)");
        }

        await ExecuteAsync(connection, transaction, """
            INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
            VALUES ($id, 2, $now, 'SignalReceived', 'wait-go', $data),
                   ($id, 3, $now, 'StepCompleted', 'assign', NULL),
                   ($id, 4, $now, 'InstanceCompleted', 'done', NULL)
            """, ("$id", Text(signal.InstanceId)), ("$now", now), ("$data", $"{{\"signal\":\"go\",\"signalId\":\"{signal.SignalId}\"}}"));
        return 0;
    }, transactional: true, cancellationToken);

    public ValueTask DisposeAsync()
    {
        _writer.Dispose();
        SqliteConnection.ClearAllPools();
        return ValueTask.CompletedTask;
    }

    private async Task<T> WriteAsync<T>(Func<SqliteConnection, SqliteTransaction?, Task<T>> work, bool transactional, CancellationToken cancellationToken)
    {
        await _writer.WaitAsync(cancellationToken);
        try
        {
            await using var connection = new SqliteConnection(connectionString);
            await connection.OpenAsync(cancellationToken);
            await ExecuteAsync(connection, null, "PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;");
            if (!transactional)
            {
                return await work(connection, null);
            }

            await using var transaction = (SqliteTransaction)await connection.BeginTransactionAsync(cancellationToken);
            var result = await work(connection, transaction);
            await transaction.CommitAsync(cancellationToken);
            return result;
        }
        finally
        {
            _writer.Release();
        }
    }

    private static async Task<int> ExecuteAsync(SqliteConnection connection, SqliteTransaction? transaction, string sql, params (string Name, object Value)[] parameters)
    {
        await using var command = Command(connection, transaction, sql, parameters);
        return await command.ExecuteNonQueryAsync();
    }

    private static SqliteCommand Command(SqliteConnection connection, SqliteTransaction? transaction, string sql, params (string Name, object Value)[] parameters)
    {
        var command = new SqliteCommand(sql, connection, transaction);
        foreach (var (name, value) in parameters)
        {
            command.Parameters.AddWithValue(name, value);
        }

        return command;
    }

    // EF Core's SQLite representations: GUIDs as upper-case text, DateTime as "yyyy-MM-dd HH:mm:ss.FFFFFFF".
    private static string Text(Guid id) => id.ToString().ToUpperInvariant();

    private static string Timestamp(DateTime value) => value.ToString("yyyy-MM-dd HH:mm:ss.FFFFFFF", CultureInfo.InvariantCulture);
}
