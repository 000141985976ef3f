using System.Data.Common;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Instances, their wait-point commits and history (<see cref="IInstanceStore"/>).</summary>
public sealed partial class RelationalWorkflowStore : IInstanceStore
{
    public async Task CreateInstanceAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        try
        {
            await WriteAsync(commit, cancellationToken).ConfigureAwait(false);
        }
        catch (DbException e) when (dialect.IsUniqueViolation(e))
        {
            throw new DuplicateInstanceException(commit.Instance.IdempotencyKey is { } key
                ? $"idempotency key '{key}'"
                : $"business key '{commit.Instance.BusinessKey}' of '{commit.Instance.DefinitionName}'");
        }
    }

    public Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken) => WriteAsync(commit, cancellationToken);

    /// <summary>The instance update carries the check itself (<see cref="Rows.UpdateInstance"/>), in the same statement.</summary>
    public bool GuardsDueSignals => true;

    private Task<bool> WriteAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        commit.Instance.SearchAttributes is null ? WriteAsync(commit, null, cancellationToken) : WriteWithSearchAsync(commit, cancellationToken);

    /// <summary>A commit that writes search attribute values: their slots are looked up first (cached; read once per tenant and name).</summary>
    private async Task<bool> WriteWithSearchAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        var values = commit.Instance.SearchAttributes!;
        var declared = await SearchSlotsAsync(commit.Instance.Tenant, values.Select(v => v.Name), cancellationToken).ConfigureAwait(false);
        return await WriteAsync(commit, SearchColumn.Of(values, declared), cancellationToken).ConfigureAwait(false);
    }

    private Task<bool> WriteAsync(WaitPointCommit commit, List<SearchColumn>? search, CancellationToken cancellationToken) =>
        _writer.WriteAsync(async (db, commands, transaction, savepoint, ct) =>
        {
            await WriteOnceAsync(db, commands, transaction, savepoint, commit, search, ct).ConfigureAwait(false);
            return true;
        }, cancellationToken);

    /// <summary>
    /// A wait point's writes as hand-written statements in the group commit's transaction (sent as one batch where the
    /// provider batches):
    /// the instance row checked against the version read before the run, history, new signals and tasks, and the fate of
    /// the signals the run consumed.
    /// </summary>
    private async Task WriteOnceAsync(WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction, SqlStatement? savepoint,
        WaitPointCommit commit, List<SearchColumn>? search, CancellationToken cancellationToken)
    {
        var instance = commit.Instance;
        instance.Version = commit.IsNew ? 1 : commit.ExpectedVersion + 1;
        var nowMs = NowMs();
        var handledAt = Now().UtcDateTime;

        var statements = new List<SqlStatement>(5 + commit.SignalTransitions.Count);
        // A group commit's savepoint for this write goes in the same round trip, first.
        if (savepoint is not null)
        {
            statements.Add(savepoint);
        }

        var row = statements.Count;
        var handedOver = AddInstanceAndNewRows(statements, commit, nowMs, search);
        var leased = statements.Count;
        AddLeasedSettlements(statements, commit, handledAt);
        var leasedEnd = statements.Count;
        AddUnleasedSettlements(statements, commit, handledAt);
        AddQueueChanges(statements, commit, nowMs, handledAt);

        int[] affected;
        try
        {
            affected = await SqlExecution.ExecuteAsync(db.Database.GetDbConnection(), transaction, statements, commands, cancellationToken)
                .ConfigureAwait(false);
        }
        catch (DbException e) when (!commit.IsNew && dialect.IsUniqueViolation(e))
        {
            // Two writers from the same version append history rows from the same first sequence; whichever statement
            // the database checks first, the loser is the one that read a stale instance.
            throw new ConcurrencyConflictException(instance.Id);
        }

        ThrowUnlessApplied(commit, affected, row, leased, leasedEnd);
        if (handedOver is not null)
        {
            Unlease(handedOver, affected);
        }
    }

    /// <summary>
    /// The instance row (inserted, or updated only from the version the run read), then the commit's history, new signals
    /// and new tasks, each one statement whatever their number. Returns the deliveries asked to be handed over, with the
    /// statement that leases each (null when there are none).
    /// </summary>
    private List<(Engine.Events.EventDelivery, int)>? AddInstanceAndNewRows(List<SqlStatement> statements, WaitPointCommit commit, long nowMs,
        List<SearchColumn>? search)
    {
        var instance = commit.Instance;
        statements.Add((commit.IsNew, search) switch
        {
            (true, null) => Rows.Insert(dialect, "wf_instances", Rows.InstanceColumns, [instance], Rows.InstanceValues),
            (true, _) => Rows.InsertInstance(dialect, instance, search),
            _ => Rows.UpdateInstance(dialect, instance, commit.ExpectedVersion, commit.RequireNoDueSignals ? nowMs : null, search),
        });
        if (commit.History.Count > 0)
        {
            // One row for the commit's events (schema 7), whatever their number: one row to write and index per wait point,
            // and one statement text, so one cached command.
            statements.Add(Rows.Insert(dialect, "wf_history", Rows.HistoryColumns, HistoryRows.Of(commit.History), Rows.HistoryValues));
        }

        if (commit.NewSignals.Count > 0)
        {
            statements.Add(Rows.Insert(dialect, "wf_signals", Rows.SignalColumns, commit.NewSignals, Rows.SignalValues));
        }

        if (commit.NewTasks.Count > 0)
        {
            statements.Add(Rows.Insert(dialect, "wf_tasks", Rows.TaskColumns, commit.NewTasks, Rows.TaskValues));
        }

        // The outbox: after the instance row, whose lock orders two commits of one instance, so their sequences are in commit order.
        return commit.HasDeliveries ? AddDeliveries(dialect, statements, commit.Deliveries, commit.IsNew) : null;
    }

    /// <summary>Clears the lease of each handed-over delivery its statement did not write leased: it waits for the claim.</summary>
    private static void Unlease(List<(Engine.Events.EventDelivery Delivery, int Statement)> handedOver, int[] affected)
    {
        foreach (var (delivery, statement) in handedOver)
        {
            if (affected[statement] == 0)
            {
                delivery.LeaseOwner = null;
                delivery.LeaseToken = null;
                delivery.LeaseUntilMs = null;
                delivery.Attempts = 0;
            }
        }
    }

    /// <summary>The claimed signals the run consumed: each update only matches while our lease token is still the row's.</summary>
    private void AddLeasedSettlements(List<SqlStatement> statements, WaitPointCommit commit, DateTime handledAt)
    {
        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.LeaseToken is { } token)
            {
                statements.Add(Rows.SettleLeasedSignal(dialect, transition.SignalId, token, transition.Status, transition.Error, handledAt));
            }
        }
    }

    /// <summary>Parked signals consumed by this run, and timers that lost their purpose; never touches a handled one.</summary>
    private void AddUnleasedSettlements(List<SqlStatement> statements, WaitPointCommit commit, DateTime handledAt)
    {
        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.LeaseToken is null)
            {
                var from = transition.Status == SignalStatus.Cancelled ? SignalStatus.Pending : SignalStatus.Parked;
                statements.Add(new SqlStatement(dialect)
                    .Sql("UPDATE wf_signals SET status = ").Param(transition.Status.ToString())
                    .Sql(", last_error = COALESCE(").Param(transition.Error).Sql(", last_error), handled_at = ").Param(handledAt)
                    .Sql(" WHERE id = ").Param(transition.SignalId)
                    .Sql(" AND status IN (").Param(from.ToString()).Sql(", 'Parked')"));
            }
        }
    }

    /// <summary>
    /// The instance's parked signals queued again (due now at the latest), and, when it ended, its open work closed: the
    /// signals and tasks nobody will wait for any more (a signal a worker holds is left to that worker).
    /// </summary>
    private void AddQueueChanges(List<SqlStatement> statements, WaitPointCommit commit, long nowMs, DateTime handledAt)
    {
        var instanceId = commit.Instance.Id;
        if (commit.RequeueParked)
        {
            statements.Add(new SqlStatement(dialect)
                .Sql("UPDATE wf_signals SET status = 'Pending', due_at_ms = CASE WHEN due_at_ms < ").Param(nowMs)
                .Sql(" THEN due_at_ms ELSE ").Param(nowMs).Sql(" END, lease_owner = NULL, lease_until_ms = NULL")
                .Sql(" WHERE instance_id = ").Param(instanceId).Sql(" AND status = 'Parked'"));
        }

        if (commit.CloseOpenWork)
        {
            statements.Add(new SqlStatement(dialect)
                .Sql("UPDATE wf_signals SET status = CASE WHEN name LIKE '$%' THEN 'Cancelled' ELSE 'Unmatched' END, handled_at = ")
                .Param(handledAt)
                .Sql(" WHERE instance_id = ").Param(instanceId).Sql(" AND status IN ('Pending', 'Parked')")
                .Sql(" AND (lease_until_ms IS NULL OR lease_until_ms < ").Param(nowMs).Sql(")"));
            foreach (var taskId in commit.ClosedTasks)
            {
                statements.Add(new SqlStatement(dialect)
                    .Sql("UPDATE wf_tasks SET status = 'Cancelled' WHERE id = ").Param(taskId).Sql(" AND status IN ('Open', 'Claimed')"));
            }
        }
    }

    /// <summary>
    /// Throws when the instance row did not match the version the run read (<paramref name="row"/>: its statement), or a
    /// claimed signal's lease was lost (<paramref name="leased"/> to <paramref name="leasedEnd"/>: their statements).
    /// </summary>
    private static void ThrowUnlessApplied(WaitPointCommit commit, int[] affected, int row, int leased, int leasedEnd)
    {
        if (affected[row] != 1)
        {
            throw new ConcurrencyConflictException(commit.Instance.Id);
        }

        for (var k = leased; k < leasedEnd; k++)
        {
            if (affected[k] != 1)
            {
                var lost = commit.SignalTransitions.Where(t => t.LeaseToken is not null).ElementAt(k - leased);
                throw new LeaseLostException(lost.SignalId);
            }
        }
    }

    // The row is read by its key alone and the tenant tested on the row found, as Rows.InsertSignalIfOpen does: with the
    // tenant beside the key, PostgreSQL may keep a plan that scans the tenant's index.
    public Task<WorkflowInstance?> GetInstanceAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        QuerySingleAsync(new SqlStatement(dialect).Sql($"SELECT {Rows.InstanceColumns} FROM (SELECT {Rows.InstanceColumns} FROM wf_instances WHERE id = ")
                .Param(id).Sql(" LIMIT 1) AS i WHERE i.tenant = ").Param(tenant),
            static r => Rows.ReadInstance(r), cancellationToken);

    public Task<WorkflowInstance?> GetInstanceForEngineAsync(Guid id, CancellationToken cancellationToken) =>
        QuerySingleAsync(new SqlStatement(dialect).Sql($"SELECT {Rows.InstanceColumns} FROM wf_instances WHERE id = ").Param(id),
            static r => Rows.ReadInstance(r), cancellationToken);

    public async Task<IReadOnlyList<WorkflowInstance>> GetInstancesAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken)
    {
        if (ids.Count == 0)
        {
            return [];
        }

        var statement = new SqlStatement(dialect).Sql($"SELECT {Rows.InstanceColumns} FROM wf_instances WHERE id IN ");
        statement.Values([.. ids.Cast<object?>()]);
        return await ReadAsync(statement, static async (reader, ct) =>
        {
            var found = new List<WorkflowInstance>();
            while (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                found.Add(Rows.ReadInstance(reader));
            }

            return found;
        }, cancellationToken).ConfigureAwait(false);
    }

    public async Task<WorkflowInstance?> FindInstanceAsync(string tenant, string? idempotencyKey, string definitionName, string? businessKey,
        CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        if (idempotencyKey is not null)
        {
            var byKey = await db.Instances.AsNoTracking().FirstOrDefaultAsync(i => i.Tenant == tenant && i.IdempotencyKey == idempotencyKey, cancellationToken).ConfigureAwait(false);
            if (byKey is not null)
            {
                return byKey;
            }
        }

        if (businessKey is not null)
        {
            return await db.Instances.AsNoTracking()
                .FirstOrDefaultAsync(i => i.Tenant == tenant && i.DefinitionName == definitionName && i.BusinessKey == businessKey && i.CompletedAt == null,
                    cancellationToken).ConfigureAwait(false);
        }

        return null;
    }

    public async Task<Guid?> FindNewestInstanceIdAsync(string tenant, string definitionName, string businessKey, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // The key's index ends in created_at: the newest is the last entry of the key, whatever plan the server keeps.
        return await db.Instances.AsNoTracking()
            .Where(i => i.Tenant == tenant && i.DefinitionName == definitionName && i.BusinessKey == businessKey)
            .OrderByDescending(i => i.CreatedAt).Select(i => (Guid?)i.Id).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        var instanceId = instance.Id;
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await HistoryOf(db, h => h.InstanceId == instanceId, cancellationToken).ConfigureAwait(false);
    }

    public async Task<KeysetPage<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, int? afterSequence, int limit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // Every row read holds at least one event after the position, so limit + 1 rows hold the page and say whether more follow.
        var events = await HistoryOf(HistoryRowsFrom(db, instance.Id, afterSequence).Take(limit + 1), cancellationToken).ConfigureAwait(false);
        return KeysetPage.After(events, afterSequence, limit, instance.HistoryLength);
    }

    /// <summary>
    /// An instance's history rows from the one that holds the event after <paramref name="afterSequence"/>, in order. A row
    /// holds a commit's events, numbered on from its own sequence: the first row is the last that starts at or before that
    /// event. Both the row and the ones after it are seeks on the (instance_id, sequence) index.
    /// </summary>
    internal static IQueryable<HistoryEvent> HistoryRowsFrom(WorkflowDbContext db, Guid instanceId, int? afterSequence)
    {
        var rows = db.History.AsNoTracking().Where(h => h.InstanceId == instanceId);
        if (afterSequence is { } after)
        {
            var next = after + 1;
            rows = rows.Where(h => h.Sequence >= (db.History.Where(r => r.InstanceId == instanceId && r.Sequence <= next).Max(r => (int?)r.Sequence) ?? next));
        }

        return rows.OrderBy(h => h.Sequence);
    }

    /// <summary>
    /// The events of the history rows matching <paramref name="filter"/>: rows in first-sequence order, each expanded, so
    /// one instance's events come out in sequence order (a row's events never interleave with another row's).
    /// </summary>
    private static Task<List<HistoryEvent>> HistoryOf(WorkflowDbContext db, System.Linq.Expressions.Expression<Func<HistoryEvent, bool>> filter,
        CancellationToken cancellationToken) =>
        HistoryOf(db.History.AsNoTracking().Where(filter).OrderBy(h => h.Sequence), cancellationToken);

    /// <summary>The events of <paramref name="query"/>'s history rows, each row expanded in place.</summary>
    private static async Task<List<HistoryEvent>> HistoryOf(IQueryable<HistoryEvent> query, CancellationToken cancellationToken)
    {
        var rows = await query.Select(h => new StoredHistoryRow(h, EF.Property<string?>(h, HistoryRows.MoreJsonProperty)))
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var events = new List<HistoryEvent>(rows.Count);
        foreach (var (first, more) in rows)
        {
            HistoryRows.Expand(first, more, events);
        }

        return events;
    }

    /// <summary>A wf_history row as read: its first event and its more_json.</summary>
    private sealed record StoredHistoryRow(HistoryEvent First, string? More);
}
