using System.Data.Common;
using System.Globalization;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational;

namespace WorkflowService.RunnerBackends;

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
        var history = (await ReadHistoryAsync(string.Empty, [], cancellationToken))
            .Select(e => new StoredEvent(e.InstanceId, e.Sequence, e.At, e.Type, SignalIdOf(e.Type, e.DataJson))).ToList();
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

    public override async Task<IReadOnlyList<StoredDelivery>> ReadDeliveriesAsync(CancellationToken cancellationToken) =>
        // A waiting delivery's attempts and lease are in its queue row (schema 18).
        await ReadAllAsync("SELECT d.id, d.instance_id, d.type, d.status, COALESCE(q.attempts, d.attempts), q.lease_owner FROM wf_deliveries d "
            + "LEFT JOIN wf_delivery_queue q ON q.id = d.id", [],
            r => new StoredDelivery(r.GetGuid(0), r.GetGuid(1), r.GetString(2), r.GetString(3), r.GetInt32(4), Text(r, 5)), cancellationToken);

    public override async Task<IReadOnlyList<Guid>> DeliveriesHeldAsync(string node, CancellationToken cancellationToken) =>
        await ReadAllAsync("SELECT id FROM wf_delivery_queue q "
            + "WHERE q.lease_owner = @p0 AND q.lease_until_ms IS NOT NULL", [node],
            r => r.GetGuid(0), cancellationToken);

    public override async Task<IReadOnlyList<(long DueAtMs, DateTime At)>> ReadDueAndFiredAsync(string signalName, string eventType, string? stepId,
        CancellationToken cancellationToken)
    {
        // The events are matched after expanding the rows: an event after the first of its commit is only in more_json.
        var due = await ReadAllAsync("SELECT due_at_ms, instance_id FROM wf_signals WHERE name = @p0", [signalName],
            r => (DueAtMs: r.GetInt64(0), InstanceId: r.GetGuid(1)), cancellationToken);
        var fired = (await ReadHistoryAsync(" WHERE instance_id IN (SELECT instance_id FROM wf_signals WHERE name = @p0)", [signalName], cancellationToken))
            .Where(e => e.Type == eventType && (stepId is null || e.StepId == stepId))
            .ToLookup(e => e.InstanceId);
        return [.. due.SelectMany(s => fired[s.InstanceId].Select(e => (s.DueAtMs, e.At)))];
    }

    public override async Task<IReadOnlyList<ScheduledStart>> ReadScheduledStartsAsync(CancellationToken cancellationToken) =>
        await ReadAllAsync($"SELECT id, idempotency_key, created_at FROM wf_instances WHERE idempotency_key LIKE '{ScheduledStart.KeyPrefix}%'", [],
            r => ScheduledStart.Parse(r.GetGuid(0), r.GetString(1), Utc(r, 2)), cancellationToken);

    public override async Task<IReadOnlyList<(Guid InstanceId, string Name, DateTime CreatedAt)>> ReadSignalArrivalsAsync(string namePrefix,
        CancellationToken cancellationToken) =>
        await ReadAllAsync("SELECT instance_id, name, created_at FROM wf_signals WHERE name LIKE @p0", [namePrefix + "%"],
            r => (r.GetGuid(0), r.GetString(1), Utc(r, 2)), cancellationToken);

    public override async Task<IReadOnlyList<(Guid InstanceId, DateTime At, string? DataJson)>> ReadEventsAsync(string eventType,
        CancellationToken cancellationToken) =>
        // Every row is expanded: an event after the first of its commit is only in more_json.
        [.. (await ReadHistoryAsync(string.Empty, [], cancellationToken)).Where(e => e.Type == eventType).Select(e => (e.InstanceId, e.At, e.DataJson))];

    /// <summary>
    /// The history events of the wf_history rows <paramref name="filter"/> selects, each row expanded into its events the
    /// way the store reads them (<see cref="HistoryRows"/>: one row per commit since schema 7).
    /// </summary>
    private async Task<List<HistoryEvent>> ReadHistoryAsync(string filter, object[] values, CancellationToken cancellationToken)
    {
        var rows = await ReadAllAsync($"SELECT instance_id, sequence, at, type, step_id, data_json, actor, more_json FROM wf_history{filter}", values,
            r => (First: new HistoryEvent
            {
                InstanceId = r.GetGuid(0), Sequence = r.GetInt32(1), At = DateTime.SpecifyKind(r.GetDateTime(2), DateTimeKind.Utc),
                Type = r.GetString(3), StepId = Text(r, 4), DataJson = Text(r, 5), Actor = Text(r, 6),
            }, More: Text(r, 7)), cancellationToken);
        var events = new List<HistoryEvent>(rows.Count);
        foreach (var (first, more) in rows)
        {
            HistoryRows.Expand(first, more, events);
        }

        return events;
    }

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

    private static DateTime Utc(DbDataReader r, int i) => DateTime.SpecifyKind(r.GetDateTime(i), DateTimeKind.Utc);

    private static string? Text(DbDataReader r, int i) => r.IsDBNull(i) ? null : r.GetString(i);
}
