using System.Data.Common;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// The columns of the hot-path tables as the hand-written SQL reads and writes them. The EF Core model
/// (<see cref="WorkflowDbContext"/>) creates the schema and serves the rarer queries; a test keeps both in step.
/// </summary>
internal static class Rows
{
    public const string InstanceColumns =
        "id, definition_name, definition_version, status, business_key, idempotency_key, input_json, variables_json, output_json, "
        + "error, wait_kind, wait_step_id, wait_signal, wait_timer_id, wait_task_id, parent_instance_id, parent_wait_id, branches_json, "
        + "parked_signals, version, history_length, created_at, updated_at, completed_at, started_by, tenant";

    public const string SignalColumns =
        "id, instance_id, name, payload_json, status, due_at_ms, attempts, lease_owner, lease_token, lease_until_ms, last_error, "
        + "idempotency_key, task_id, created_at, handled_at, actor, trace_parent";

    /// <summary>A history row: its first event's columns, then the events after it (<see cref="HistoryRows"/>).</summary>
    public const string HistoryColumns = "instance_id, sequence, at, type, step_id, data_json, actor, more_json";

    public const string TaskColumns =
        "id, instance_id, definition_name, step_id, title, assignee, role, status, claimed_by, data_json, result_json, created_at, completed_at, tenant";

    /// <summary>A claimed delivery as PostgreSQL's claim returns it: its log row <c>d</c>, with its queue row <c>w</c>'s due time, attempts and lease.</summary>
    public const string ClaimedDeliveryColumns =
        "d.sequence, d.id, d.subscription_id, d.tenant, d.instance_id, d.type, d.body, d.created_at, w.due_at_ms, d.status, w.attempts, w.lease_owner, "
        + "w.lease_token, w.lease_until_ms, d.last_status, d.last_error, d.delivered_at, d.latency_ms";

    /// <summary>A delivery's log row as the claim reads it (its body included); its lease, from its queue row, is set after.</summary>
    public const string LogDeliveryColumns =
        "d.sequence, d.id, d.subscription_id, d.tenant, d.instance_id, d.type, d.body, d.created_at, d.due_at_ms, d.status, d.attempts, NULL, "
        + "NULL, NULL, d.last_status, d.last_error, d.delivered_at, d.latency_ms";

    /// <summary>What a commit writes of a delivery's log row: the database numbers its sequence. Its lease is in its queue row.</summary>
    public const string DeliveryInsertColumns = "id, subscription_id, tenant, instance_id, type, body, created_at, due_at_ms, status, attempts";

    /// <summary>A waiting delivery's queue row (schema 18), written from its log row's sequence.</summary>
    public const string DeliveryQueueColumns = "id, subscription_id, instance_id, sequence, due_at_ms, attempts, lease_owner, lease_token, lease_until_ms";

    /// <summary>An instance from <see cref="InstanceColumns"/> starting at ordinal <paramref name="at"/>.</summary>
    public static WorkflowInstance ReadInstance(DbDataReader r, int at = 0) => new()
    {
        Id = r.GetGuid(at + 0),
        DefinitionName = r.GetString(at + 1),
        DefinitionVersion = r.GetInt32(at + 2),
        Status = Enum.Parse<InstanceStatus>(r.GetString(at + 3)),
        BusinessKey = NullableString(r, at + 4),
        IdempotencyKey = NullableString(r, at + 5),
        InputJson = NullableString(r, at + 6),
        VariablesJson = r.GetString(at + 7),
        OutputJson = NullableString(r, at + 8),
        Error = NullableString(r, at + 9),
        WaitKind = r.IsDBNull(at + 10) ? null : Enum.Parse<WaitKind>(r.GetString(at + 10)),
        WaitStepId = NullableString(r, at + 11),
        WaitSignal = NullableString(r, at + 12),
        WaitSignalId = NullableGuid(r, at + 13),
        WaitTaskId = NullableGuid(r, at + 14),
        ParentInstanceId = NullableGuid(r, at + 15),
        ParentWaitId = NullableGuid(r, at + 16),
        BranchesJson = NullableString(r, at + 17),
        ParkedSignals = r.GetInt32(at + 18),
        Version = r.GetInt32(at + 19),
        HistoryLength = r.GetInt32(at + 20),
        CreatedAt = Utc(r.GetDateTime(at + 21)),
        UpdatedAt = Utc(r.GetDateTime(at + 22)),
        CompletedAt = r.IsDBNull(at + 23) ? null : Utc(r.GetDateTime(at + 23)),
        StartedBy = NullableString(r, at + 24),
        Tenant = r.GetString(at + 25),
    };

    /// <summary>A signal from <see cref="SignalColumns"/> starting at ordinal <paramref name="at"/>.</summary>
    public static SignalMessage ReadSignal(DbDataReader r, int at = 0) => new()
    {
        Id = r.GetGuid(at + 0),
        InstanceId = r.GetGuid(at + 1),
        Name = r.GetString(at + 2),
        PayloadJson = NullableString(r, at + 3),
        Status = Enum.Parse<SignalStatus>(r.GetString(at + 4)),
        DueAtMs = r.GetInt64(at + 5),
        Attempts = r.GetInt32(at + 6),
        LeaseOwner = NullableString(r, at + 7),
        LeaseToken = r.GetInt64(at + 8),
        LeaseUntilMs = r.IsDBNull(at + 9) ? null : r.GetInt64(at + 9),
        LastError = NullableString(r, at + 10),
        IdempotencyKey = NullableString(r, at + 11),
        SubjectId = NullableGuid(r, at + 12),
        CreatedAt = Utc(r.GetDateTime(at + 13)),
        HandledAt = r.IsDBNull(at + 14) ? null : Utc(r.GetDateTime(at + 14)),
        Actor = NullableString(r, at + 15),
        TraceParent = NullableString(r, at + 16),
    };

    /// <summary>The values of <see cref="InstanceColumns"/>, in order.</summary>
    public static object?[] InstanceValues(WorkflowInstance i) =>
    [
        i.Id, i.DefinitionName, i.DefinitionVersion, i.Status.ToString(), S(i.BusinessKey), S(i.IdempotencyKey), S(i.InputJson), i.VariablesJson,
        S(i.OutputJson), S(i.Error), S(i.WaitKind?.ToString()), S(i.WaitStepId), S(i.WaitSignal), G(i.WaitSignalId), G(i.WaitTaskId),
        G(i.ParentInstanceId), G(i.ParentWaitId), S(i.BranchesJson), i.ParkedSignals, i.Version, i.HistoryLength, i.CreatedAt, i.UpdatedAt,
        T(i.CompletedAt), S(i.StartedBy), i.Tenant,
    ];

    public static object?[] SignalValues(SignalMessage m) =>
    [
        m.Id, m.InstanceId, m.Name, S(m.PayloadJson), m.Status.ToString(), m.DueAtMs, m.Attempts, S(m.LeaseOwner), m.LeaseToken,
        L(m.LeaseUntilMs), S(m.LastError), S(m.IdempotencyKey), G(m.SubjectId), m.CreatedAt, T(m.HandledAt), S(m.Actor), S(m.TraceParent),
    ];

    public static object?[] HistoryValues(HistoryRows.Row row)
    {
        var h = row.First;
        return [h.InstanceId, h.Sequence, h.At, h.Type, S(h.StepId), S(h.DataJson), S(h.Actor), S(row.MoreJson)];
    }

    public static object?[] TaskValues(HumanTask t) =>
    [
        t.Id, t.InstanceId, t.DefinitionName, t.StepId, S(t.Title), S(t.Assignee), S(t.Role), t.Status.ToString(), S(t.ClaimedBy), S(t.DataJson),
        S(t.ResultJson), t.CreatedAt, T(t.CompletedAt), t.Tenant,
    ];

    /// <summary>A delivery's log row as its commit writes it: pending, no attempt yet (its queue row counts them until it settles).</summary>
    public static object?[] DeliveryValues(EventDelivery d) =>
        [d.Id, d.SubscriptionId, d.Tenant, d.InstanceId, d.Type, d.Body, d.CreatedAt, d.DueAtMs, nameof(DeliveryStatus.Pending), 0];

    /// <summary>A delivery from <see cref="LogDeliveryColumns"/>.</summary>
    public static EventDelivery ReadDelivery(DbDataReader r) => new()
    {
        Sequence = r.GetInt64(0),
        Id = r.GetGuid(1),
        SubscriptionId = r.GetGuid(2),
        Tenant = r.GetString(3),
        InstanceId = r.GetGuid(4),
        Type = r.GetString(5),
        Body = r.GetString(6),
        CreatedAt = Utc(r.GetDateTime(7)),
        DueAtMs = r.GetInt64(8),
        Status = Enum.Parse<DeliveryStatus>(r.GetString(9)),
        Attempts = r.GetInt32(10),
        LeaseOwner = NullableString(r, 11),
        LeaseToken = r.IsDBNull(12) ? null : r.GetInt64(12),
        LeaseUntilMs = r.IsDBNull(13) ? null : r.GetInt64(13),
        LastStatus = r.IsDBNull(14) ? null : r.GetInt32(14),
        LastError = NullableString(r, 15),
        DeliveredAt = r.IsDBNull(16) ? null : Utc(r.GetDateTime(16)),
        LatencyMs = r.IsDBNull(17) ? null : r.GetInt64(17),
    };

    // Nullable values as typed nulls (TypedNull): a statement keeps its parameter types whichever of its values are null.
    private static object S(string? value) => TypedNull.Of(value);

    private static object G(Guid? value) => TypedNull.Of(value);

    private static object L(long? value) => TypedNull.Of(value);

    private static object T(DateTime? value) => TypedNull.Of(value);

    public static SqlStatement Insert<T>(SqlDialect dialect, string table, string columns, IEnumerable<T> rows, Func<T, object?[]> values) =>
        Insert(new SqlStatement(dialect), table, columns, rows, values);

    /// <summary>The same INSERT, appended to <paramref name="statement"/> (a common table expression that reads its rows).</summary>
    public static SqlStatement Insert<T>(SqlStatement statement, string table, string columns, IEnumerable<T> rows, Func<T, object?[]> values)
    {
        ArgumentNullException.ThrowIfNull(statement);
        statement.Sql($"INSERT INTO {table} ({columns}) VALUES ");
        var first = true;
        foreach (var row in rows)
        {
            if (!first)
            {
                statement.Sql(", ");
            }

            statement.Values(values(row));
            first = false;
        }

        return statement;
    }

    /// <summary>
    /// A new instance's row, with its search attribute values in their slot columns (<paramref name="search"/>; an instance
    /// of a definition without attributes is written by <see cref="Insert{T}"/> with <see cref="InstanceColumns"/>).
    /// </summary>
    public static SqlStatement InsertInstance(SqlDialect dialect, WorkflowInstance instance, IReadOnlyList<SearchColumn> search)
    {
        var statement = new SqlStatement(dialect).Sql($"INSERT INTO wf_instances ({InstanceColumns}");
        foreach (var column in search)
        {
            statement.Sql(", ").Sql(column.Slot);
        }

        statement.Sql(") VALUES (").List(InstanceValues(instance));
        foreach (var column in search)
        {
            statement.Sql(", ").Param(column.Value);
        }

        return statement.Sql(")");
    }

    /// <summary>
    /// The instance's row written over, only from the version read before the run; with <paramref name="noSignalDueAtMs"/>,
    /// also only while none of the instance's signals is pending and due by then (a signal applied on arrival must not
    /// overtake one queued before it, nor one a worker holds). No row is affected otherwise. With <paramref name="search"/>,
    /// the instance's search attribute values are set in the same statement.
    /// </summary>
    public static SqlStatement UpdateInstance(SqlDialect dialect, WorkflowInstance instance, int expectedVersion, long? noSignalDueAtMs = null,
        IReadOnlyList<SearchColumn>? search = null)
    {
        var statement = new SqlStatement(dialect).Sql("UPDATE wf_instances SET ");
        var values = InstanceValues(instance);
        var first = true;
        for (var i = 0; i < InstanceColumnNames.Length; i++)
        {
            // Neither the id, the creation time nor the tenant ever changes.
            if (InstanceColumnNames[i] is "id" or "created_at" or "tenant")
            {
                continue;
            }

            statement.Sql(first ? string.Empty : ", ").Sql(InstanceColumnNames[i]).Sql(" = ").Param(values[i]);
            first = false;
        }

        foreach (var column in search ?? [])
        {
            statement.Sql(", ").Sql(column.Slot).Sql(" = ").Param(column.Value);
        }

        statement.Sql(" WHERE id = ").Param(instance.Id).Sql(" AND version = ").Param(expectedVersion);
        if (noSignalDueAtMs is { } dueBy)
        {
            // ix_wf_signals_instance_id_status answers it.
            statement.Sql(" AND NOT EXISTS (SELECT 1 FROM wf_signals WHERE instance_id = ").Param(instance.Id)
                .Sql(" AND status = 'Pending' AND due_at_ms <= ").Param(dueBy).Sql(")");
        }

        return statement;
    }

    /// <summary>
    /// The signal inserted only while its instance is open: INSERT … SELECT … WHERE EXISTS, the instance check and the
    /// insert in one statement (one round trip). Affects no row when the instance is missing or has ended, or (with
    /// <paramref name="tenant"/>) belongs to another tenant.
    /// </summary>
    public static SqlStatement InsertSignalIfOpen(SqlDialect dialect, SignalMessage signal, string? tenant = null)
    {
        var statement = new SqlStatement(dialect).Sql($"INSERT INTO wf_signals ({SignalColumns}) SELECT ").List(SignalValues(signal));

        // The instance is read by its key alone (LIMIT 1 keeps the tenant and status tests out of that read), and they are
        // applied to the row found. With them beside the key, PostgreSQL may plan the read, prepared while the table is
        // small, as a scan of the tenant's instances in the (tenant, status, created_at) index, and keep that plan on the
        // writer connections: every signal then read the tenant's whole index (measured: 4-6 ms and 6,000 buffers a
        // signal after 20,000 instances, a third of the throughput).
        statement.Sql(" WHERE EXISTS (SELECT 1 FROM (SELECT tenant, status FROM wf_instances WHERE id = ").Param(signal.InstanceId)
            .Sql(" LIMIT 1) AS i WHERE i.status NOT IN ('Completed', 'Failed', 'Cancelled')");
        if (tenant is not null)
        {
            statement.Sql(" AND i.tenant = ").Param(tenant);
        }

        return statement.Sql(")");
    }

    /// <summary>
    /// A claimed signal's fate at its wait point's commit: matches only while <paramref name="leaseToken"/> is still the
    /// row's (affects no row once the lease was lost). The lease owner stays on the row: it tells which node handled it.
    /// </summary>
    public static SqlStatement SettleLeasedSignal(SqlDialect dialect, Guid signalId, long leaseToken, SignalStatus status, string? error,
        DateTime handledAt) =>
        new SqlStatement(dialect)
            .Sql("UPDATE wf_signals SET status = ").Param(status.ToString())
            .Sql(", lease_until_ms = NULL, handled_at = ").Param(handledAt)
            .Sql(", last_error = COALESCE(").Param(error).Sql(", last_error)")
            .Sql(" WHERE id = ").Param(signalId).Sql(" AND lease_token = ").Param(leaseToken);

    /// <summary>The column names of <see cref="InstanceColumns"/>, in order.</summary>
    public static readonly string[] InstanceColumnNames = Split(InstanceColumns);
    public static readonly string[] SignalColumnNames = Split(SignalColumns);
    public static readonly string[] HistoryColumnNames = Split(HistoryColumns);
    public static readonly string[] TaskColumnNames = Split(TaskColumns);

    /// <summary>The signal columns qualified by a table alias (for statements that join).</summary>
    public static string SignalColumnsOf(string alias) => string.Join(", ", SignalColumnNames.Select(c => $"{alias}.{c}"));

    /// <summary>The instance columns qualified by a table alias (for statements that join).</summary>
    public static string InstanceColumnsOf(string alias) => string.Join(", ", InstanceColumnNames.Select(c => $"{alias}.{c}"));

    private static string[] Split(string columns) => columns.Split(',', StringSplitOptions.TrimEntries);

    private static string? NullableString(DbDataReader r, int i) => r.IsDBNull(i) ? null : r.GetString(i);

    private static Guid? NullableGuid(DbDataReader r, int i) => r.IsDBNull(i) ? null : r.GetGuid(i);

    private static DateTime Utc(DateTime value) => value.Kind == DateTimeKind.Utc ? value : DateTime.SpecifyKind(value, DateTimeKind.Utc);
}
