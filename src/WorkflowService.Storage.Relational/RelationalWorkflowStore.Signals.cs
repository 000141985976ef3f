using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>The signal queue (<see cref="ISignalQueue"/>).</summary>
public sealed partial class RelationalWorkflowStore : ISignalQueue
{
    public async Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        var (stored, created) = await InsertSignalAsync(signal,
            Rows.Insert(dialect, "wf_signals", Rows.SignalColumns, [signal], Rows.SignalValues), cancellationToken).ConfigureAwait(false);
        return (stored!, created);
    }

    // INSERT … SELECT … WHERE EXISTS: the instance check and the insert are one statement, one round trip.
    public Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, string tenant, CancellationToken cancellationToken) =>
        InsertSignalAsync(signal, Rows.InsertSignalIfOpen(dialect, signal, tenant), cancellationToken);

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
    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "The lease token only tells this claim from an earlier one of the same signal (a fencing value), not a secret.")]
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

    [SuppressMessage("Performance", "CA1849:Call async methods when in an async method", Justification = "Read after ReadAsync without SequentialAccess: the row is buffered, so IsDBNull blocks on nothing, and IsDBNullAsync would allocate a task per row on the claim path.")]
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

    [SuppressMessage("Performance", "CA1849:Call async methods when in an async method", Justification = "Read after ReadAsync without SequentialAccess: the row is buffered, so IsDBNull blocks on nothing, and IsDBNullAsync would allocate a task per row on the poll path.")]
    public Task<long?> GetNextDueAsync(CancellationToken cancellationToken) =>
        ReadAsync(new SqlStatement(dialect).Sql("""
                SELECT MIN(CASE WHEN lease_until_ms IS NOT NULL AND lease_until_ms > due_at_ms THEN lease_until_ms ELSE due_at_ms END)
                  FROM wf_signals WHERE status = 'Pending'
                """),
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) && !reader.IsDBNull(0) ? reader.GetInt64(0) : (long?)null,
            cancellationToken);

    public async Task<bool> ExtendLeaseAsync(Guid signalId, long leaseToken, TimeSpan lease, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var until = NowMs() + (long)lease.TotalMilliseconds;
        // Only a claim still held: a signal given back for a retry keeps its token but has no owner, and must stay due when
        // its retry says, not a lease from now.
        var rows = await db.Signals.Where(s => s.Id == signalId && s.LeaseToken == leaseToken && s.Status == SignalStatus.Pending && s.LeaseOwner != null)
            .ExecuteUpdateAsync(u => u.SetProperty(s => s.LeaseUntilMs, until), cancellationToken).ConfigureAwait(false);
        return rows == 1;
    }

    public Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken) =>
        GiveBackAsync(signalId, leaseToken, dueAtMs, error, refundAttempt: false, cancellationToken);

    public Task<bool> DeferSignalAsync(Guid signalId, long leaseToken, long dueAtMs, CancellationToken cancellationToken) =>
        GiveBackAsync(signalId, leaseToken, dueAtMs, null, refundAttempt: true, cancellationToken);

    /// <summary>Unleases a claimed signal, due at <paramref name="dueAtMs"/>: with its error (a retry), or with its attempt given back (a deferral).</summary>
    private async Task<bool> GiveBackAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, bool refundAttempt, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Signals.Where(s => s.Id == signalId && s.LeaseToken == leaseToken && s.Status == SignalStatus.Pending)
            .ExecuteUpdateAsync(u =>
            {
                u.SetProperty(s => s.LeaseOwner, (string?)null)
                    .SetProperty(s => s.LeaseUntilMs, (long?)null)
                    .SetProperty(s => s.DueAtMs, dueAtMs);
                if (refundAttempt)
                {
                    u.SetProperty(s => s.Attempts, s => s.Attempts > 0 ? s.Attempts - 1 : 0);
                }
                else
                {
                    u.SetProperty(s => s.LastError, s => error ?? s.LastError);
                }
            }, cancellationToken).ConfigureAwait(false);
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

    public async Task<SignalMessage?> GetSignalAsync(string tenant, Guid signalId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await SignalsOf(db, tenant).FirstOrDefaultAsync(s => s.Id == signalId, cancellationToken).ConfigureAwait(false);
    }

    public async Task<SignalMessage?> GetSignalForEngineAsync(Guid signalId, CancellationToken cancellationToken)
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

    public async Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, string tenant, HistoryEvent? replayEvent, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        return await RetryTransientAsync((db, ct) => ReplayOnceAsync(db, signalId, tenant, replayEvent, ct), cancellationToken).ConfigureAwait(false);
    }

    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "A fresh lease token (a fencing value) so an earlier claim's release cannot touch the replayed signal; not a secret.")]
    private async Task<ReplayOutcome> ReplayOnceAsync(WorkflowDbContext db, Guid signalId, string tenant, HistoryEvent? replayEvent,
        CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            db.ChangeTracker.Clear();
            await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            var signal = await db.Signals.FirstOrDefaultAsync(s => s.Id == signalId, cancellationToken).ConfigureAwait(false);
            // A signal is its instance's tenant's (one without an instance the default tenant's): to another tenant it does not exist.
            var instance = signal is null ? null : await db.Instances.FirstOrDefaultAsync(i => i.Id == signal.InstanceId, cancellationToken).ConfigureAwait(false);
            if (signal is null || (instance?.Tenant ?? "") != tenant)
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

            if (instance is { Status: InstanceStatus.Faulted })
            {
                instance.Status = instance.WaitKind is null ? InstanceStatus.Running : InstanceStatus.Waiting;
                instance.Error = null;
                instance.Version++;
                // Dated when the replay commits, and never before the instance's last commit (StoreInstant.NotBefore).
                instance.UpdatedAt = Now().NotBefore(instance.UpdatedAt);
                if (replayEvent is not null)
                {
                    replayEvent.At = instance.UpdatedAt;
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
            catch (DbUpdateException e) when (attempt < 5 && (e is DbUpdateConcurrencyException || dialect.IsUniqueViolation(e)))
            {
                // Another replay (or a commit of the instance) got there first: the signal row moved on, or the history
                // sequence this replay meant to append was taken. Read again: the signal is no longer dead-lettered (409).
            }
        }
    }
}
