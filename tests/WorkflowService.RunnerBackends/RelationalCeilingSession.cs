using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Infrastructure;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The database transactions the store issues for one signal-roundtrip workflow, with no engine and no HTTP around
/// them, in the store's own SQL: its dialect's claim statement and its statement builders (<see cref="Rows"/>,
/// <see cref="SqlStatement"/>, <see cref="SqlExecution"/>: one batch per transaction where the provider batches). The
/// start (instance + one history row of two events), the signal insert, the claim (on the dialect's claim connections, its
/// instance joined where the dialect joins it) and the completion (instance + signal updated, one history row of three
/// events), each its own
/// transaction, written under the dialect's writer gate (SQLite: one writer at a time). Unlike the service it has no
/// group commit and no prepared-command cache. Thread-safe: every call takes a pooled connection.
/// </summary>
internal sealed class RelationalCeilingSession(SqlDialect dialect, Func<CancellationToken, Task<DbConnection>> open, Func<ValueTask> dispose,
    GroupCommitWriter? grouped = null)
    : CeilingSession
{
    /// <summary>
    /// A session on the run's database, whose schema the store's migrations bring up to date first (as a node does at
    /// start-up), for a run of the ceiling alone, where no service has created it.
    /// </summary>
    /// <param name="groupCommit">
    /// Write as the store does: every write queued to a <see cref="GroupCommitWriter"/> with the store's options for the
    /// dialect (a few writer connections sharing commits on a server; one writer on SQLite), each in its savepoint. False:
    /// each write its own transaction on a pooled connection.
    /// </param>
    public static async Task<CeilingSession> OpenAsync(SqlDialect dialect, Action<DbContextOptionsBuilder> provider, string connectionString,
        Func<CancellationToken, Task<DbConnection>> open, Func<ValueTask> dispose, bool groupCommit, CancellationToken cancellationToken)
    {
        var options = new DbContextOptionsBuilder<WorkflowDbContext>();
        provider(options);
        var contexts = new PooledDbContextFactory<WorkflowDbContext>(options.Options);
        await using (var db = await contexts.CreateDbContextAsync(cancellationToken))
        {
            await dialect.PrepareDatabaseAsync(db, cancellationToken);
        }

        var migrator = new Storage.Relational.Migrations.SchemaMigrator(contexts, dialect,
            new Storage.Relational.Migrations.SchemaMigrationSettings(connectionString, ApplyAtStartup: true, TimeSpan.FromMinutes(10)),
            TimeProvider.System, Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance);
        await migrator.MigrateAsync(cancellationToken);
        return new RelationalCeilingSession(dialect, open, dispose,
            groupCommit ? new GroupCommitWriter(contexts, dialect, dialect.SingleWriter ? GroupCommitOptions.SingleWriter : GroupCommitOptions.Server) : null);
    }

    /// <summary>Whether writes share commits (<see cref="GroupCommitWriter"/>), as the store's do.</summary>
    public bool GroupCommit => grouped is not null;

    public override Task StartAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        return WriteAsync([
            Rows.Insert(dialect, "wf_instances", Rows.InstanceColumns, [StartedInstance(instanceId, now)], Rows.InstanceValues),
            Rows.Insert(dialect, "wf_history", Rows.HistoryColumns, HistoryRows.Of(StartHistory(instanceId, now)), Rows.HistoryValues),
        ], transactional: true, cancellationToken);
    }

    public override Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken) =>
        // The statement of RelationalWorkflowStore.EnqueueSignalIfOpenAsync.
        WriteAsync([Rows.InsertSignalIfOpen(dialect, GoSignal(signalId, instanceId, DateTime.UtcNow))], transactional: false, cancellationToken);

    /// <summary>
    /// Claims up to <paramref name="max"/> due signals, as the store's claim does: its one statement on the dialect's claim
    /// connections (the instances joined in), or, on a database of one writer at a time, inside the writes (the group commit
    /// when the session has it) with the instances read after it.
    /// </summary>
    public override async Task<IReadOnlyList<ClaimedSignal>> ClaimAsync(string owner, int max, CancellationToken cancellationToken)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        var joined = dialect.ClaimWithInstancesSql is not null;
        var claim = new SqlStatement(dialect).Sql(dialect.ClaimWithInstancesSql ?? dialect.ClaimSql).Bind(owner, token, now, now + (long)Lease.TotalMilliseconds, max);
        if (dialect.ClaimDataSource is { } claims)
        {
            await using var connection = await claims.OpenConnectionAsync(cancellationToken);
            return await ReadClaimAsync(connection, null, claim, max, joined, null, cancellationToken);
        }

        List<ClaimedSignal> claimed;
        if (grouped is not null)
        {
            claimed = await grouped.WriteAsync((db, commands, transaction, _, ct) =>
                ReadClaimAsync(db.Database.GetDbConnection(), transaction, claim, max, joined, commands, ct), cancellationToken);
        }
        else
        {
            using var gate = await dialect.EnterWriteAsync(cancellationToken);
            await using var connection = await open(cancellationToken);
            claimed = await ReadClaimAsync(connection, null, claim, max, joined, null, cancellationToken);
        }

        return grouped is null || joined || claimed.Count == 0 ? claimed : await WithInstancesAsync(claimed, cancellationToken);
    }

    [SuppressMessage("Performance", "CA1849:Call async methods when in an async method", Justification = "As the store reads a claim: the row is buffered after ReadAsync, so IsDBNull blocks on nothing.")]
    private static async Task<List<ClaimedSignal>> ReadClaimAsync(DbConnection connection, DbTransaction? transaction, SqlStatement claim, int max,
        bool joined, SqlCommandCache? commands, CancellationToken cancellationToken)
    {
        var command = SqlCommandCache.RentOrCreate(commands, connection, transaction, claim, out var owned);
        try
        {
            await using var reader = await command.ExecuteReaderAsync(cancellationToken);
            var claimed = new List<ClaimedSignal>(max);
            // The store materialises the signal and (where the claim joins it) its instance: so does the ceiling.
            var at = Rows.SignalColumnNames.Length;
            while (await reader.ReadAsync(cancellationToken))
            {
                claimed.Add(new ClaimedSignal(Rows.ReadSignal(reader), joined && !reader.IsDBNull(at) ? Rows.ReadInstance(reader, at) : null));
            }

            return claimed;
        }
        finally
        {
            if (owned)
            {
                await command.DisposeAsync();
            }
        }
    }

    /// <summary>The claimed signals' instances, read after the claim where the claim does not join them (the store on SQLite).</summary>
    private async Task<IReadOnlyList<ClaimedSignal>> WithInstancesAsync(List<ClaimedSignal> claimed, CancellationToken cancellationToken)
    {
        var ids = claimed.Select(c => c.Signal.InstanceId).Distinct().ToList();
        await using var connection = await open(cancellationToken);
        await using var command = connection.CreateCommand();
        var select = new SqlStatement(dialect).Sql($"SELECT {Rows.InstanceColumnsOf("i")} FROM wf_instances AS i WHERE i.id IN (");
        for (var n = 0; n < ids.Count; n++)
        {
            select.Sql(n == 0 ? string.Empty : ", ").Param(ids[n]);
        }

        select.Sql(")").ApplyTo(command);
        var instances = new Dictionary<Guid, WorkflowInstance>();
        await using (var reader = await command.ExecuteReaderAsync(cancellationToken))
        {
            while (await reader.ReadAsync(cancellationToken))
            {
                var instance = Rows.ReadInstance(reader, 0);
                instances[instance.Id] = instance;
            }
        }

        return claimed.Select(c => c with { Instance = instances.GetValueOrDefault(c.Signal.InstanceId) }).ToList();
    }

    public override Task CompleteAsync(ClaimedSignal claimed, CancellationToken cancellationToken)
    {
        var now = DateTime.UtcNow;
        var signal = claimed.Signal;
        var instance = CompletedInstance(claimed, now);

        return WriteAsync([
            Rows.UpdateInstance(dialect, instance, expectedVersion: 1),
            Rows.Insert(dialect, "wf_history", Rows.HistoryColumns, HistoryRows.Of(CompletionHistory(instance.Id, signal.Id, now)),
                Rows.HistoryValues),
            // The consumed signal's update, as the store's wait-point commit writes it.
            Rows.SettleLeasedSignal(dialect, signal.Id, signal.LeaseToken, SignalStatus.Handled, error: null, handledAt: now),
        ], transactional: true, cancellationToken, affected =>
        {
            if (affected[0] != 1 || affected[2] != 1)
            {
                throw new InvalidOperationException($"the completion of {instance.Id} matched no row (version or lease lost)");
            }
        });
    }

    public override async ValueTask DisposeAsync()
    {
        if (grouped is not null)
        {
            await grouped.DisposeAsync();
        }

        await dispose();
    }

    private async Task WriteAsync(IReadOnlyList<SqlStatement> statements, bool transactional, CancellationToken cancellationToken,
        Action<int[]>? check = null)
    {
        if (grouped is not null)
        {
            // As the store writes: one queued write in the group's shared transaction, its savepoint first where the writer
            // asks for that (one round trip), whether or not the write needs a transaction of its own.
            await grouped.WriteAsync(async (db, commands, transaction, savepoint, ct) =>
            {
                var affected = await SqlExecution.ExecuteAsync(db.Database.GetDbConnection(), transaction,
                    savepoint is null ? statements : [savepoint, .. statements], commands, ct);
                check?.Invoke(savepoint is null ? affected : affected[1..]);
                return true;
            }, cancellationToken);
            return;
        }

        using var gate = await dialect.EnterWriteAsync(cancellationToken);
        await using var connection = await open(cancellationToken);
        await using var transaction = transactional ? await connection.BeginTransactionAsync(cancellationToken) : null;
        var affected = await SqlExecution.ExecuteAsync(connection, transaction, statements, cache: null, cancellationToken);
        check?.Invoke(affected);
        if (transaction is not null)
        {
            await transaction.CommitAsync(cancellationToken);
        }
    }
}
