using System.Data.Common;
using System.Globalization;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// The store's tables read with plain SQL over the backend's own driver (the same statements on SQLite and PostgreSQL).
/// Owns <paramref name="connection"/>.
/// </summary>
internal sealed class SqlStoreSnapshotReader(DbConnection connection) : StoreSnapshotReader
{
    private const string SignalColumns = "id, instance_id, name, status, idempotency_key, lease_owner, attempts";

    public override async Task<StoreSnapshot> ReadAsync(CancellationToken cancellationToken)
    {
        var instances = await ReadAllAsync(
            "SELECT id, status, wait_kind, wait_signal, wait_timer_id, version, history_length, idempotency_key FROM wf_instances", [],
            r => new StoredInstance(r.GetGuid(0), r.GetString(1), Text(r, 2), Text(r, 3), r.IsDBNull(4) ? null : r.GetGuid(4), r.GetInt32(5),
                r.GetInt32(6), Text(r, 7)), cancellationToken);
        var signals = await ReadAllAsync($"SELECT {SignalColumns} FROM wf_signals", [], ReadSignal, cancellationToken);
        var history = await ReadAllAsync("SELECT instance_id, sequence, at, type, data_json FROM wf_history", [],
            r => new StoredEvent(r.GetGuid(0), r.GetInt32(1), r.GetDateTime(2), r.GetString(3), SignalIdOf(r.GetString(3), Text(r, 4))),
            cancellationToken);
        return new StoreSnapshot(instances, signals, history);
    }

    public override async Task<IReadOnlyDictionary<string, int>> CountByStatusAsync(CancellationToken cancellationToken)
    {
        var rows = await ReadAllAsync("SELECT status, count(*) FROM wf_instances GROUP BY status", [],
            r => (Status: r.GetString(0), Count: Count(r, 1)), cancellationToken);
        return rows.ToDictionary(r => r.Status, r => r.Count);
    }

    public override async Task<int> CountSignalsAsync(string status, CancellationToken cancellationToken) =>
        (await ReadAllAsync("SELECT count(*) FROM wf_signals WHERE status = @p0", [status], r => Count(r, 0), cancellationToken))[0];

    public override async Task<int> CountHandledByAsync(string owner, CancellationToken cancellationToken) =>
        (await ReadAllAsync("SELECT count(*) FROM wf_signals WHERE status = 'Handled' AND lease_owner = @p0", [owner], r => Count(r, 0), cancellationToken))[0];

    public override async Task<IReadOnlyList<Guid>> ClaimsHeldAsync(string node, CancellationToken cancellationToken) =>
        await ReadAllAsync("SELECT id FROM wf_signals WHERE status = 'Pending' AND lease_owner = @p0 AND lease_until_ms IS NOT NULL", [node],
            r => r.GetGuid(0), cancellationToken);

    public override async Task<IReadOnlyList<StoredSignal>> ReadSignalsAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken) =>
        ids.Count == 0
            ? []
            : await ReadAllAsync($"SELECT {SignalColumns} FROM wf_signals WHERE id IN ({string.Join(", ", ids.Select((_, i) => $"@p{i}"))})",
                [.. ids.Cast<object>()], ReadSignal, cancellationToken);

    public override async Task<IReadOnlyList<(long DueAtMs, DateTime At)>> ReadDueAndFiredAsync(string signalName, string eventType, string? stepId,
        CancellationToken cancellationToken) =>
        await ReadAllAsync(
            "SELECT s.due_at_ms, h.at FROM wf_signals s JOIN wf_history h ON h.instance_id = s.instance_id AND h.type = @p0"
            + (stepId is null ? string.Empty : " AND h.step_id = @p2") + " WHERE s.name = @p1",
            stepId is null ? [eventType, signalName] : [eventType, signalName, stepId],
            r => (r.GetInt64(0), DateTime.SpecifyKind(r.GetDateTime(1), DateTimeKind.Utc)), cancellationToken);

    public override ValueTask DisposeAsync() => connection.DisposeAsync();

    /// <summary>Runs <paramref name="sql"/> with its parameters @p0, @p1, … bound to <paramref name="values"/> and reads every row.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "Every statement is this class's own text; values are bound as parameters, never written into it.")]
    private async Task<List<T>> ReadAllAsync<T>(string sql, object[] values, Func<DbDataReader, T> read, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.CommandTimeout = 300;
        for (var i = 0; i < values.Length; i++)
        {
            var parameter = command.CreateParameter();
            parameter.ParameterName = $"@p{i}";
            parameter.Value = values[i];
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

    private static StoredSignal ReadSignal(DbDataReader r) =>
        new(r.GetGuid(0), r.GetGuid(1), r.GetString(2), r.GetString(3), Text(r, 4), Text(r, 5), r.GetInt32(6));

    /// <summary>A count(*) column: Int64 on both databases' drivers, read without assuming which.</summary>
    private static int Count(DbDataReader r, int column) => Convert.ToInt32(r.GetValue(column), CultureInfo.InvariantCulture);

    private static string? Text(DbDataReader r, int i) => r.IsDBNull(i) ? null : r.GetString(i);
}
