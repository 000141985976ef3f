using System.Data.Common;
using System.Text.Json;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// Reads the store's tables with plain SQL over the backend's own driver (the same statements on SQLite and PostgreSQL),
/// not through the service: the checker must not trust the code it checks.
/// </summary>
internal static class StoreSnapshotReader
{
    public static async Task<StoreSnapshot> ReadAsync(DbConnection connection, CancellationToken cancellationToken)
    {
        var instances = await ReadAllAsync(connection,
            "SELECT id, status, wait_kind, wait_signal, wait_timer_id, version, history_length, idempotency_key FROM wf_instances",
            r => new StoredInstance(r.GetGuid(0), r.GetString(1), Text(r, 2), Text(r, 3), r.IsDBNull(4) ? null : r.GetGuid(4), r.GetInt32(5),
                r.GetInt32(6), Text(r, 7)), cancellationToken);
        var signals = await ReadAllAsync(connection, "SELECT id, instance_id, name, status, idempotency_key FROM wf_signals",
            r => new StoredSignal(r.GetGuid(0), r.GetGuid(1), r.GetString(2), r.GetString(3), Text(r, 4)), cancellationToken);
        var history = await ReadAllAsync(connection, "SELECT instance_id, sequence, at, type, data_json FROM wf_history",
            r => new StoredEvent(r.GetGuid(0), r.GetInt32(1), r.GetDateTime(2), r.GetString(3), SignalIdOf(r.GetString(3), Text(r, 4))),
            cancellationToken);
        return new StoreSnapshot(instances, signals, history);
    }

    /// <summary>How many instances are in each status (to wait for a backlog to drain without asking the service).</summary>
    public static async Task<IReadOnlyDictionary<string, int>> CountByStatusAsync(DbConnection connection, CancellationToken cancellationToken)
    {
        var rows = await ReadAllAsync(connection, "SELECT status, count(*) FROM wf_instances GROUP BY status",
            r => (Status: r.GetString(0), Count: Convert.ToInt32(r.GetValue(1), System.Globalization.CultureInfo.InvariantCulture)), cancellationToken);
        return rows.ToDictionary(r => r.Status, r => r.Count);
    }

    /// <summary>How many signals are in <paramref name="status"/>.</summary>
    public static async Task<int> CountSignalsAsync(DbConnection connection, string status, CancellationToken cancellationToken) =>
        (await ReadAllAsync(connection, "SELECT count(*) FROM wf_signals WHERE status = @value", status,
            r => Convert.ToInt32(r.GetValue(0), System.Globalization.CultureInfo.InvariantCulture), cancellationToken))[0];

    /// <summary>The signals <paramref name="node"/> holds a live claim on (pending, leased, owned by it).</summary>
    public static async Task<IReadOnlyList<Guid>> ClaimsHeldAsync(DbConnection connection, string node, CancellationToken cancellationToken) =>
        await ReadAllAsync(connection, "SELECT id FROM wf_signals WHERE status = 'Pending' AND lease_owner = @value AND lease_until_ms IS NOT NULL", node,
            r => r.GetGuid(0), cancellationToken);

    private static Task<List<T>> ReadAllAsync<T>(DbConnection connection, string sql, Func<DbDataReader, T> read, CancellationToken cancellationToken) =>
        ReadAllAsync(connection, sql, null, read, cancellationToken);

    /// <summary>Runs <paramref name="sql"/> (with its one parameter @value, if given) and reads every row.</summary>
    private static async Task<List<T>> ReadAllAsync<T>(DbConnection connection, string sql, string? value, Func<DbDataReader, T> read,
        CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.CommandTimeout = 300;
        if (value is not null)
        {
            var parameter = command.CreateParameter();
            parameter.ParameterName = "@value";
            parameter.Value = value;
            command.Parameters.Add(parameter);
        }

        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var rows = new List<T>();
        while (await reader.ReadAsync(cancellationToken))
        {
            rows.Add(read(reader));
        }

        return rows;
    }

    private static string? Text(DbDataReader r, int i) => r.IsDBNull(i) ? null : r.GetString(i);

    private static Guid? SignalIdOf(string type, string? data)
    {
        if (data is null || type is not ("SignalReceived" or "SignalParked" or "InstanceReplayed" or "InstanceFaulted"))
        {
            return null;
        }

        using var json = JsonDocument.Parse(data);
        return json.RootElement.TryGetProperty("signalId", out var id) && id.TryGetGuid(out var guid) ? guid : null;
    }
}
