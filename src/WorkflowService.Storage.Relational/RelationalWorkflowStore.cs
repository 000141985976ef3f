using System.Data;
using System.Data.Common;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>The workflow store on any relational database EF Core supports; the SQL that differs comes from the dialect.</summary>
public sealed class RelationalWorkflowStore(IDbContextFactory<WorkflowDbContext> contexts, SqlDialect dialect, TimeProvider time)
    : IWorkflowStore, IAsyncDisposable
{
    // Wait-point commits and signal inserts go through group commit (and, where the database takes one writer at a time,
    // claims as well).
    private readonly GroupCommitWriter _writer = new(contexts, dialect,
        dialect.SingleWriter ? GroupCommitOptions.SingleWriter : GroupCommitOptions.Server);

    // The store's clock: this process's clock corrected by its distance to the database's, measured at start-up, so
    // that every node agrees on when a signal is due.
    private long _clockOffsetMs;

    public long NowMs() => time.GetUtcNow().ToUnixTimeMilliseconds() + Interlocked.Read(ref _clockOffsetMs);

    public async Task InitializeAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await dialect.EnsureSchemaAsync(db, cancellationToken).ConfigureAwait(false);
        await CheckSchemaVersionAsync(cancellationToken).ConfigureAwait(false);
        var before = time.GetUtcNow().ToUnixTimeMilliseconds();
        var database = await dialect.ReadClockMsAsync(db, cancellationToken).ConfigureAwait(false);
        var after = time.GetUtcNow().ToUnixTimeMilliseconds();
        if (database is { } dbNow)
        {
            Interlocked.Exchange(ref _clockOffsetMs, dbNow - (before + after) / 2);
        }
    }

    /// <summary>
    /// Records the schema version in a new database, and refuses to start on a database written by a build with another
    /// schema (there are no migrations yet: such a database must be recreated or migrated by hand).
    /// </summary>
    private async Task CheckSchemaVersionAsync(CancellationToken cancellationToken)
    {
        for (var attempt = 0; attempt < 3; attempt++)
        {
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            SchemaVersion? stored;
            try
            {
                stored = await db.Schema.AsNoTracking().Where(v => v.Id == 1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is DbException or InvalidOperationException)
            {
                throw new InvalidOperationException(
                    $"The {dialect.Name} database holds workflow tables from a build older than schema versioning "
                    + $"(no wf_schema table); this build needs schema {SchemaVersion.Current}. Recreate the database.", e);
            }

            if (stored is not null)
            {
                if (stored.Version != SchemaVersion.Current)
                {
                    throw new InvalidOperationException(
                        $"The {dialect.Name} database has workflow schema {stored.Version}; this build needs schema {SchemaVersion.Current}.");
                }

                return;
            }

            db.Schema.Add(new SchemaVersion { Version = SchemaVersion.Current, AppliedAt = time.GetUtcNow().UtcDateTime });
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (DbUpdateException e) when (dialect.IsUniqueViolation(e))
            {
                // Another node recorded it first: read it back.
            }
        }
    }

    // ---------------------------------------------------------------- definitions

    public async Task<DefinitionRecord> PublishDefinitionAsync(string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            var latest = await db.Definitions.Where(d => d.Name == name).MaxAsync(d => (int?)d.Version, cancellationToken).ConfigureAwait(false);
            var record = build((latest ?? 0) + 1);
            db.Definitions.Add(record);
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                return record;
            }
            catch (DbUpdateException e) when (dialect.IsUniqueViolation(e) && attempt < 10)
            {
                // Another node published the same name concurrently: take the next number.
            }
        }
    }

    public async Task<DefinitionRecord?> GetDefinitionAsync(string name, int? version, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var query = db.Definitions.AsNoTracking().Where(d => d.Name == name);
        query = version is { } v ? query.Where(d => d.Version == v) : query.OrderByDescending(d => d.Version);
        return await query.FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Definitions.AsNoTracking()
            .Select(d => new { d.Name, d.Version, d.Description, d.CreatedAt })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return rows.GroupBy(r => r.Name)
            .Select(g => g.MaxBy(r => r.Version)!)
            .OrderBy(r => r.Name, StringComparer.Ordinal)
            .Select(r => new DefinitionSummary(r.Name, r.Version, r.Description, r.CreatedAt))
            .ToList();
    }

    public async Task<IReadOnlyList<DefinitionRecord>> ListDefinitionVersionsAsync(string name, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Definitions.AsNoTracking().Where(d => d.Name == name).OrderBy(d => d.Version)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    // ---------------------------------------------------------------- instances

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

    private Task WriteAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        _writer.WriteAsync(async (db, commands, transaction, savepoint, ct) =>
        {
            await WriteOnceAsync(db, commands, transaction, savepoint, commit, ct).ConfigureAwait(false);
            return true;
        }, cancellationToken);

    public ValueTask DisposeAsync() => _writer.DisposeAsync();

    /// <summary>
    /// Runs a unit of work under the provider's execution strategy: on PostgreSQL a bounded retry of transient failures
    /// (a dropped connection). Every attempt gets the same context, emptied, and opens its own transaction.
    /// </summary>
    private async Task<T> RetryTransientAsync<T>(Func<WorkflowDbContext, CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Database.CreateExecutionStrategy().ExecuteAsync((db, work), static (state, ct) =>
        {
            // A failed attempt may have left entities tracked: start each one clean.
            state.db.ChangeTracker.Clear();
            return state.work(state.db, ct);
        }, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A wait point's writes as hand-written statements in the group commit's transaction (sent as one batch where the
    /// provider batches):
    /// the instance row checked against the version read before the run, history, new signals and tasks, and the fate of
    /// the signals the run consumed.
    /// </summary>
    private async Task WriteOnceAsync(WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction, SqlStatement? savepoint,
        WaitPointCommit commit, CancellationToken cancellationToken)
    {
        var instance = commit.Instance;
        instance.Version = commit.IsNew ? 1 : commit.ExpectedVersion + 1;
        var nowMs = NowMs();
        var handledAt = time.GetUtcNow().UtcDateTime;

        var statements = new List<SqlStatement>(5 + commit.SignalTransitions.Count);
        // A group commit's savepoint for this write goes in the same round trip, first.
        if (savepoint is not null)
        {
            statements.Add(savepoint);
        }

        var row = statements.Count;
        statements.Add(commit.IsNew
            ? Rows.Insert(dialect, "wf_instances", Rows.InstanceColumns, [instance], Rows.InstanceValues)
            : Rows.UpdateInstance(dialect, instance, commit.ExpectedVersion));
        if (commit.History.Count > 0)
        {
            statements.Add(Rows.Insert(dialect, "wf_history", Rows.HistoryColumns, commit.History, Rows.HistoryValues));
        }

        if (commit.NewSignals.Count > 0)
        {
            statements.Add(Rows.Insert(dialect, "wf_signals", Rows.SignalColumns, commit.NewSignals, Rows.SignalValues));
        }

        if (commit.NewTasks.Count > 0)
        {
            statements.Add(Rows.Insert(dialect, "wf_tasks", Rows.TaskColumns, commit.NewTasks, Rows.TaskValues));
        }

        // The claimed signals: each update only matches while our lease token is still the row's. The lease owner stays
        // on the row: it tells which node handled the signal.
        var leased = statements.Count;
        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.LeaseToken is { } token)
            {
                statements.Add(new SqlStatement(dialect)
                    .Sql("UPDATE wf_signals SET status = ").Param(transition.Status.ToString())
                    .Sql(", lease_until_ms = NULL, handled_at = ").Param(handledAt)
                    .Sql(", last_error = COALESCE(").Param(transition.Error).Sql(", last_error)")
                    .Sql(" WHERE id = ").Param(transition.SignalId).Sql(" AND lease_token = ").Param(token));
            }
        }

        var leasedEnd = statements.Count;
        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.LeaseToken is null)
            {
                // Parked signals consumed by this run, and timers that lost their purpose; never touch a handled one.
                var from = transition.Status == SignalStatus.Cancelled ? SignalStatus.Pending : SignalStatus.Parked;
                statements.Add(new SqlStatement(dialect)
                    .Sql("UPDATE wf_signals SET status = ").Param(transition.Status.ToString())
                    .Sql(", last_error = COALESCE(").Param(transition.Error).Sql(", last_error), handled_at = ").Param(handledAt)
                    .Sql(" WHERE id = ").Param(transition.SignalId)
                    .Sql(" AND status IN (").Param(from.ToString()).Sql(", 'Parked')"));
            }
        }

        if (commit.RequeueParked)
        {
            statements.Add(new SqlStatement(dialect)
                .Sql("UPDATE wf_signals SET status = 'Pending', due_at_ms = CASE WHEN due_at_ms < ").Param(nowMs)
                .Sql(" THEN due_at_ms ELSE ").Param(nowMs).Sql(" END, lease_owner = NULL, lease_until_ms = NULL")
                .Sql(" WHERE instance_id = ").Param(instance.Id).Sql(" AND status = 'Parked'"));
        }

        if (commit.CloseOpenWork)
        {
            statements.Add(new SqlStatement(dialect)
                .Sql("UPDATE wf_signals SET status = CASE WHEN name LIKE '$%' THEN 'Cancelled' ELSE 'Unmatched' END, handled_at = ")
                .Param(handledAt)
                .Sql(" WHERE instance_id = ").Param(instance.Id).Sql(" AND status IN ('Pending', 'Parked')")
                .Sql(" AND (lease_until_ms IS NULL OR lease_until_ms < ").Param(nowMs).Sql(")"));
            foreach (var taskId in commit.ClosedTasks)
            {
                statements.Add(new SqlStatement(dialect)
                    .Sql("UPDATE wf_tasks SET status = 'Cancelled' WHERE id = ").Param(taskId).Sql(" AND status IN ('Open', 'Claimed')"));
            }
        }

        int[] affected;
        try
        {
            affected = await SqlExecution.ExecuteAsync(db.Database.GetDbConnection(), transaction, statements, commands, cancellationToken)
                .ConfigureAwait(false);
        }
        catch (DbException e) when (!commit.IsNew && dialect.IsUniqueViolation(e))
        {
            // Two writers from the same version append history with the same sequence numbers; whichever statement
            // the database checks first, the loser is the one that read a stale instance.
            throw new ConcurrencyConflictException(instance.Id);
        }

        if (affected[row] != 1)
        {
            throw new ConcurrencyConflictException(instance.Id);
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

    /// <summary>How many times a read is repeated after a transient failure.</summary>
    private const int TransientReadRetries = 2;

    public Task<WorkflowInstance?> GetInstanceAsync(Guid id, CancellationToken cancellationToken) =>
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

    /// <summary>Runs a hand-written query and reads its first row, if any.</summary>
    private Task<T?> QuerySingleAsync<T>(SqlStatement statement, Func<DbDataReader, T> read, CancellationToken cancellationToken)
        where T : class =>
        ReadAsync(statement, async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) ? read(reader) : null, cancellationToken);

    /// <summary>
    /// Runs a hand-written query: on a connection straight from the provider's data source where there is one
    /// (PostgreSQL), else on a pooled context's connection.
    /// </summary>
    private async Task<T> ReadAsync<T>(SqlStatement statement, Func<DbDataReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
    {
        if (dialect.DataSource is { } source)
        {
            return await ReadOnAsync(source, statement, read, cancellationToken).ConfigureAwait(false);
        }

        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await using var command = db.Database.GetDbConnection().CreateCommand();
            statement.ApplyTo(command);
            await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            return await read(reader, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await db.Database.CloseConnectionAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Runs a statement that returns rows on a connection straight from <paramref name="source"/>, repeated after a
    /// transient failure (a pooled connection the server dropped in a restart or a failover fails once, then the pool
    /// hands out a new one): for reads, and for claims, whose lost answer only delays their signals until the lease ends.
    /// </summary>
    private async Task<T> ReadOnAsync<T>(DbDataSource source, SqlStatement statement, Func<DbDataReader, CancellationToken, Task<T>> read,
        CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                await using var command = source.CreateCommand();
                statement.ApplyTo(command);
                await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
                return await read(reader, cancellationToken).ConfigureAwait(false);
            }
            catch (DbException e) when (attempt < TransientReadRetries && dialect.IsTransient(e))
            {
            }
        }
    }

    public async Task<WorkflowInstance?> FindInstanceAsync(string? idempotencyKey, string definitionName, string? businessKey, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        if (idempotencyKey is not null)
        {
            var byKey = await db.Instances.AsNoTracking().FirstOrDefaultAsync(i => i.IdempotencyKey == idempotencyKey, cancellationToken).ConfigureAwait(false);
            if (byKey is not null)
            {
                return byKey;
            }
        }

        if (businessKey is not null)
        {
            return await db.Instances.AsNoTracking()
                .FirstOrDefaultAsync(i => i.DefinitionName == definitionName && i.BusinessKey == businessKey, cancellationToken).ConfigureAwait(false);
        }

        return null;
    }

    public async Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Instances.AsNoTracking();
        if (query.DefinitionName is not null) q = q.Where(i => i.DefinitionName == query.DefinitionName);
        if (query.DefinitionVersion is { } version) q = q.Where(i => i.DefinitionVersion == version);
        if (query.Status is { } status) q = q.Where(i => i.Status == status);
        if (query.BusinessKey is not null) q = q.Where(i => i.BusinessKey == query.BusinessKey);
        if (query.CreatedFrom is { } from) q = q.Where(i => i.CreatedAt >= from);
        if (query.CreatedTo is { } to) q = q.Where(i => i.CreatedAt < to);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        var items = await q.OrderByDescending(i => i.CreatedAt).ThenBy(i => i.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<WorkflowInstance>(items, total, query.Offset, query.Limit);
    }

    public async Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.History.AsNoTracking().Where(h => h.InstanceId == instanceId).OrderBy(h => h.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    // ---------------------------------------------------------------- signals

    public async Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        var (stored, created) = await InsertSignalAsync(signal,
            Rows.Insert(dialect, "wf_signals", Rows.SignalColumns, [signal], Rows.SignalValues), cancellationToken).ConfigureAwait(false);
        return (stored!, created);
    }

    public Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        // INSERT … SELECT … WHERE EXISTS: the instance check and the insert are one statement, one round trip.
        var statement = new SqlStatement(dialect).Sql($"INSERT INTO wf_signals ({Rows.SignalColumns}) SELECT ");
        var values = Rows.SignalValues(signal);
        for (var i = 0; i < values.Length; i++)
        {
            statement.Sql(i == 0 ? string.Empty : ", ").Param(values[i]);
        }

        statement.Sql(" WHERE EXISTS (SELECT 1 FROM wf_instances WHERE id = ").Param(signal.InstanceId)
            .Sql(" AND status NOT IN ('Completed', 'Failed', 'Cancelled'))");
        return InsertSignalAsync(signal, statement, cancellationToken);
    }

    /// <summary>Runs a signal insert; a repeated idempotency key answers the signal stored first.</summary>
    private async Task<(SignalMessage? Signal, bool Created)> InsertSignalAsync(SignalMessage signal, SqlStatement insert, CancellationToken cancellationToken)
    {
        try
        {
            var rows = await _writer.WriteAsync(async (db, commands, transaction, savepoint, ct) =>
            {
                var affected = await SqlExecution.ExecuteAsync(db.Database.GetDbConnection(), transaction,
                    savepoint is null ? [insert] : [savepoint, insert], commands, ct).ConfigureAwait(false);
                return affected[^1];
            }, cancellationToken).ConfigureAwait(false);
            return rows == 1 ? (signal, true) : (null, false);
        }
        catch (DbException e) when (dialect.IsUniqueViolation(e) && signal.IdempotencyKey is not null)
        {
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            var existing = await db.Signals.AsNoTracking()
                .FirstAsync(s => s.InstanceId == signal.InstanceId && s.IdempotencyKey == signal.IdempotencyKey, cancellationToken).ConfigureAwait(false);
            return (existing, false);
        }
    }

    public async Task<IReadOnlyList<SignalMessage>> ClaimDueSignalsAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken) =>
        (await ClaimAsync(owner, max, lease, withInstances: false, cancellationToken).ConfigureAwait(false)).Select(c => c.Signal).ToList();

    public Task<IReadOnlyList<ClaimedSignal>> ClaimDueWorkAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken) =>
        ClaimAsync(owner, max, lease, withInstances: true, cancellationToken);

    /// <summary>
    /// The claim. On a database with claim connections (PostgreSQL) it is one statement there, the instances joined in,
    /// under <see cref="ReadOnAsync"/>'s bounded retry; where the database takes one writer at a time (SQLite) it joins
    /// the group commit, and the instances are read after it.
    /// </summary>
    private async Task<IReadOnlyList<ClaimedSignal>> ClaimAsync(string owner, int max, TimeSpan lease, bool withInstances,
        CancellationToken cancellationToken)
    {
        var now = NowMs();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        var until = now + (long)lease.TotalMilliseconds;
        var joinedSql = withInstances ? dialect.ClaimWithInstancesSql : null;
        var joined = joinedSql is not null;
        var statement = new SqlStatement(dialect).Sql(joinedSql ?? dialect.ClaimSql).Bind(owner, token, now, until, max);
        List<ClaimedSignal> claimed;
        if (dialect.ClaimDataSource is { } source)
        {
            claimed = await ReadOnAsync(source, statement, (reader, ct) => ReadClaimAsync(reader, max, joined, ct), cancellationToken)
                .ConfigureAwait(false);
        }
        else
        {
            claimed = await _writer.WriteAsync(async (db, commands, transaction, _, ct) =>
            {
                var command = SqlCommandCache.RentOrCreate(commands, db.Database.GetDbConnection(), transaction, statement, out var owned);
                try
                {
                    await using var reader = await command.ExecuteReaderAsync(ct).ConfigureAwait(false);
                    return await ReadClaimAsync(reader, max, joined, ct).ConfigureAwait(false);
                }
                finally
                {
                    if (owned)
                    {
                        await command.DisposeAsync().ConfigureAwait(false);
                    }
                }
            }, cancellationToken).ConfigureAwait(false);
        }

        if (claimed.Count > 1)
        {
            claimed.Sort(static (a, b) => a.Signal.DueAtMs.CompareTo(b.Signal.DueAtMs));
        }

        if (withInstances && !joined && claimed.Count > 0)
        {
            var instances = (await GetInstancesAsync(claimed.Select(c => c.Signal.InstanceId).ToHashSet(), cancellationToken)
                .ConfigureAwait(false)).ToDictionary(i => i.Id);
            // Each claimed signal gets an instance of its own: a worker changes it as it runs.
            claimed = claimed.Select(c => c with { Instance = instances.GetValueOrDefault(c.Signal.InstanceId)?.Clone() }).ToList();
        }

        return claimed;
    }

    private static async Task<List<ClaimedSignal>> ReadClaimAsync(DbDataReader reader, int max, bool withInstances, CancellationToken cancellationToken)
    {
        var rows = new List<ClaimedSignal>(max);
        var at = Rows.SignalColumnNames.Length;
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            var signal = Rows.ReadSignal(reader);
            rows.Add(new ClaimedSignal(signal, withInstances && !reader.IsDBNull(at) ? Rows.ReadInstance(reader, at) : null));
        }

        return rows;
    }

    public Task<long?> GetNextDueAsync(CancellationToken cancellationToken) =>
        ReadAsync(new SqlStatement(dialect).Sql("""
                SELECT MIN(CASE WHEN lease_until_ms IS NOT NULL AND lease_until_ms > due_at_ms THEN lease_until_ms ELSE due_at_ms END)
                  FROM wf_signals WHERE status = 'Pending'
                """),
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) && !reader.IsDBNull(0) ? reader.GetInt64(0) : (long?)null,
            cancellationToken);

    public async Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Signals.Where(s => s.Id == signalId && s.LeaseToken == leaseToken && s.Status == SignalStatus.Pending)
            .ExecuteUpdateAsync(u => u
                .SetProperty(s => s.LeaseOwner, (string?)null)
                .SetProperty(s => s.LeaseUntilMs, (long?)null)
                .SetProperty(s => s.DueAtMs, dueAtMs)
                .SetProperty(s => s.LastError, s => error ?? s.LastError), cancellationToken).ConfigureAwait(false);
        return rows == 1;
    }

    public async Task<bool> DeadLetterSignalAsync(Guid signalId, long leaseToken, string error, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Signals.Where(s => s.Id == signalId && s.LeaseToken == leaseToken && s.Status == SignalStatus.Pending)
            .ExecuteUpdateAsync(u => u
                .SetProperty(s => s.Status, SignalStatus.DeadLettered)
                .SetProperty(s => s.LeaseOwner, (string?)null)
                .SetProperty(s => s.LeaseUntilMs, (long?)null)
                .SetProperty(s => s.LastError, error), cancellationToken).ConfigureAwait(false);
        return rows == 1;
    }

    public async Task<int> ReleaseLeasesAsync(string owner, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // A claim released at shutdown was never attempted: give the attempt back.
        return await db.Signals.Where(s => s.LeaseOwner == owner && s.Status == SignalStatus.Pending)
            .ExecuteUpdateAsync(u => u
                .SetProperty(s => s.LeaseOwner, (string?)null)
                .SetProperty(s => s.LeaseUntilMs, (long?)null)
                .SetProperty(s => s.Attempts, s => s.Attempts > 0 ? s.Attempts - 1 : 0), cancellationToken).ConfigureAwait(false);
    }

    public async Task<SignalMessage?> GetSignalAsync(Guid signalId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Signals.AsNoTracking().FirstOrDefaultAsync(s => s.Id == signalId, cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<SignalMessage>> GetParkedSignalsAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Signals.AsNoTracking().Where(s => s.InstanceId == instanceId && s.Status == SignalStatus.Parked)
            .OrderBy(s => s.CreatedAt).ThenBy(s => s.Id).ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Signals.AsNoTracking().Where(s => s.InstanceId == instanceId)
            .OrderBy(s => s.CreatedAt).ThenBy(s => s.Id).ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    public Task<Page<SignalMessage>> ListDeadLettersAsync(int offset, int limit, CancellationToken cancellationToken) =>
        QuerySignalsAsync(new SignalQuery(SignalStatus.DeadLettered, Offset: offset, Limit: limit), cancellationToken);

    public async Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Signals.AsNoTracking();
        if (query.Status is { } status) q = q.Where(s => s.Status == status);
        if (query.ClaimedBy is not null) q = q.Where(s => s.LeaseOwner == query.ClaimedBy);
        if (query.Name is not null) q = q.Where(s => s.Name == query.Name);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        var items = await q.OrderBy(s => s.CreatedAt).ThenBy(s => s.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<SignalMessage>(items, total, query.Offset, query.Limit);
    }

    public async Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, HistoryEvent? replayEvent, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        return await RetryTransientAsync((db, ct) => ReplayOnceAsync(db, signalId, replayEvent, ct), cancellationToken).ConfigureAwait(false);
    }

    private async Task<ReplayOutcome> ReplayOnceAsync(WorkflowDbContext db, Guid signalId, HistoryEvent? replayEvent, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            db.ChangeTracker.Clear();
            await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            var signal = await db.Signals.FirstOrDefaultAsync(s => s.Id == signalId, cancellationToken).ConfigureAwait(false);
            if (signal is null)
            {
                return ReplayOutcome.NotFound;
            }

            if (signal.Status != SignalStatus.DeadLettered)
            {
                return ReplayOutcome.NotDeadLettered;
            }

            signal.Status = SignalStatus.Pending;
            signal.Attempts = 0;
            signal.DueAtMs = NowMs();
            signal.LeaseOwner = null;
            signal.LeaseUntilMs = null;
            signal.LeaseToken = Random.Shared.NextInt64(1, long.MaxValue);

            var instance = await db.Instances.FirstOrDefaultAsync(i => i.Id == signal.InstanceId, cancellationToken).ConfigureAwait(false);
            if (instance is { Status: InstanceStatus.Faulted })
            {
                instance.Status = instance.WaitKind is null ? InstanceStatus.Running : InstanceStatus.Waiting;
                instance.Error = null;
                instance.Version++;
                instance.UpdatedAt = time.GetUtcNow().UtcDateTime;
                if (replayEvent is not null)
                {
                    replayEvent.Id = 0;
                    replayEvent.InstanceId = instance.Id;
                    replayEvent.Sequence = instance.HistoryLength++;
                    db.History.Add(replayEvent);
                }
            }

            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
                return ReplayOutcome.Replayed;
            }
            catch (DbUpdateConcurrencyException) when (attempt < 5)
            {
            }
        }
    }

    // ---------------------------------------------------------------- tasks

    public async Task<HumanTask?> GetTaskAsync(Guid taskId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId, cancellationToken).ConfigureAwait(false);
    }

    public async Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Tasks.AsNoTracking();
        if (query.Status is { } status) q = q.Where(t => t.Status == status);
        if (query.Assignee is not null) q = q.Where(t => t.Assignee == query.Assignee || t.ClaimedBy == query.Assignee);
        if (query.Role is not null) q = q.Where(t => t.Role == query.Role);
        if (query.InstanceId is { } instanceId) q = q.Where(t => t.InstanceId == instanceId);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        var items = await q.OrderBy(t => t.CreatedAt).ThenBy(t => t.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<HumanTask>(items, total, query.Offset, query.Limit);
    }

    public async Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Tasks.Where(t => t.Id == taskId && t.Status == HumanTaskStatus.Open)
            .ExecuteUpdateAsync(u => u.SetProperty(t => t.Status, HumanTaskStatus.Claimed).SetProperty(t => t.ClaimedBy, user), cancellationToken)
            .ConfigureAwait(false);
        if (rows == 1)
        {
            return TaskClaimOutcome.Claimed;
        }

        var task = await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId, cancellationToken).ConfigureAwait(false);
        return task switch
        {
            null => TaskClaimOutcome.NotFound,
            { Status: HumanTaskStatus.Claimed } when task.ClaimedBy == user => TaskClaimOutcome.Claimed,
            { Status: HumanTaskStatus.Claimed } => TaskClaimOutcome.AlreadyClaimed,
            _ => TaskClaimOutcome.Closed,
        };
    }

    public async Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        return await RetryTransientAsync((db, ct) => CompleteTaskOnceAsync(db, taskId, user, resultJson, resume, ct), cancellationToken).ConfigureAwait(false);
    }

    private async Task<TaskCompletionOutcome> CompleteTaskOnceAsync(WorkflowDbContext db, Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken)
    {
        await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        var completedAt = time.GetUtcNow().UtcDateTime;
        // Open tasks anyone may complete; a claimed one only its claimant (or a caller that names nobody).
        var rows = await db.Tasks
            .Where(t => t.Id == taskId && (t.Status == HumanTaskStatus.Open
                                           || (t.Status == HumanTaskStatus.Claimed && (user == null || t.ClaimedBy == user))))
            .ExecuteUpdateAsync(u => u
                .SetProperty(t => t.Status, HumanTaskStatus.Completed)
                .SetProperty(t => t.ResultJson, resultJson)
                .SetProperty(t => t.CompletedAt, completedAt)
                .SetProperty(t => t.ClaimedBy, t => t.ClaimedBy ?? user), cancellationToken).ConfigureAwait(false);
        if (rows == 0)
        {
            var task = await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId, cancellationToken).ConfigureAwait(false);
            return task switch
            {
                null => TaskCompletionOutcome.NotFound,
                { Status: HumanTaskStatus.Claimed } => TaskCompletionOutcome.ClaimedByOther,
                _ => TaskCompletionOutcome.Closed,
            };
        }

        db.Signals.Add(resume);
        await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
        return TaskCompletionOutcome.Completed;
    }
}
