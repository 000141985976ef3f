using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// The outbox (<see cref="IDeliveryQueue"/>) in wf_deliveries: written with each commit (<see cref="Rows.DeliveryColumns"/>),
/// claimed and settled here by hand-written statements, listed and replayed with EF Core.
/// </summary>
public sealed partial class RelationalWorkflowStore : IDeliveryQueue
{
    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "A fencing value that tells this claim from an earlier one, not a secret.")]
    public async Task<IReadOnlyList<EventDelivery>> ClaimDueDeliveriesAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken)
    {
        var statement = ClaimDeliveries(dialect, owner, Random.Shared.NextInt64(1, long.MaxValue), NowMs(), lease, max);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        // On PostgreSQL through the claims' pool, committed without waiting for the WAL flush: a claim lost in a crash of
        // the database only leases, and the delivery is claimed again once the lease runs out.
        var claimed = dialect.ClaimDataSource is { } source
            ? await ReadOnAsync(source, statement, ReadDeliveriesAsync, cancellationToken).ConfigureAwait(false)
            : await ReadAsync(statement, ReadDeliveriesAsync, cancellationToken).ConfigureAwait(false);
        claimed.Sort((a, b) => a.Sequence.CompareTo(b.Sequence));
        return claimed;
    }

    /// <summary>A commit writes a delivery leased to its node when it may (<see cref="HandOver"/>).</summary>
    public bool LeasesOnCommit => true;

    /// <summary>
    /// A delivery written leased to the committing node (its lease fields as the engine set them) when its subscription is
    /// enabled and no earlier delivery of its instance is pending for it; nothing otherwise (<see cref="InsertUnlessWritten"/>
    /// writes it then). The check reads ix_wf_deliveries_subscription_id_instance_id_sequence and the subscription's key.
    /// </summary>
    internal static SqlStatement HandOver(SqlDialect dialect, EventDelivery d)
    {
        ArgumentNullException.ThrowIfNull(d);
        return new SqlStatement(dialect).Sql($"INSERT INTO wf_deliveries ({Rows.DeliveryInsertColumns}) SELECT ").List(Rows.DeliveryValues(d))
            .Sql(" WHERE EXISTS (SELECT 1 FROM wf_subscriptions s WHERE s.id = ").Param(d.SubscriptionId).Sql(" AND s.enabled)")
            .Sql(" AND NOT EXISTS (SELECT 1 FROM wf_deliveries e WHERE e.subscription_id = ").Param(d.SubscriptionId)
            .Sql(" AND e.instance_id = ").Param(d.InstanceId).Sql(" AND e.status = 'Pending')");
    }

    /// <summary>
    /// The same delivery unleased, for the claim, unless <see cref="HandOver"/> wrote it. Tested by its key, not by the
    /// hand-over's conditions again: an earlier delivery settled between the two statements must not leave it unwritten.
    /// </summary>
    internal static SqlStatement InsertUnlessWritten(SqlDialect dialect, EventDelivery d)
    {
        ArgumentNullException.ThrowIfNull(d);
        return new SqlStatement(dialect).Sql($"INSERT INTO wf_deliveries ({Rows.DeliveryInsertColumns}) SELECT ")
            .List([d.Id, d.SubscriptionId, d.Tenant, d.InstanceId, d.Type, d.Body, d.CreatedAt, d.DueAtMs, nameof(DeliveryStatus.Pending), 0,
                TypedNull.Of((string?)null), TypedNull.Of((long?)null), TypedNull.Of((long?)null)])
            .Sql(" WHERE NOT EXISTS (SELECT 1 FROM wf_deliveries x WHERE x.id = ").Param(d.Id).Sql(")");
    }

    /// <summary>
    /// A settlement applies to the claim it settles: its lease token, on a delivery still leased (a claim sets
    /// lease_until_ms, a settlement clears it). Not "status = 'Pending'": that predicate matches the partial index of pending
    /// deliveries, and a generic plan made while the table was small read that whole index for each settlement instead of
    /// seeking the id (the settlement was most of the database's time under load).
    /// </summary>
    internal const string StillLeased = "lease_until_ms IS NOT NULL";

    /// <summary>The statement that records how one claimed delivery's attempt went.</summary>
    internal static SqlStatement Settle(SqlDialect dialect, DeliverySettlement s)
    {
        ArgumentNullException.ThrowIfNull(s);
        var statement = new SqlStatement(dialect).Sql("UPDATE wf_deliveries SET status = ").Param(s.Status.ToString())
            .Sql(", lease_owner = NULL, lease_until_ms = NULL, last_status = ").Param(TypedNull.Of(s.HttpStatus))
            .Sql(", last_error = ").Param(TypedNull.Of(s.Error is { Length: > 1000 } e ? e[..1000] : s.Error));
        if (s.Status == DeliveryStatus.Delivered)
        {
            statement.Sql(", delivered_at = ").Param(TypedNull.Of(s.DeliveredAt)).Sql(", latency_ms = ").Param(TypedNull.Of(s.LatencyMs));
        }
        else if (s.RetryAtMs is { } retryAt)
        {
            statement.Sql(", due_at_ms = ").Param(retryAt);
        }

        return statement.Sql(" WHERE id = ").Param(s.Id).Sql(" AND lease_token = ").Param(s.LeaseToken).Sql(" AND " + StillLeased);
    }

    public async Task<int> SettleDeliveriesAsync(IReadOnlyList<DeliverySettlement> settlements, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settlements);
        if (settlements.Count == 0)
        {
            return 0;
        }

        // One statement each, every one a seek of the delivery's id. Not one statement joining the batch's rows: PostgreSQL
        // kept that statement's generic plan, made while the table was empty, a hash join over a scan of the whole table.
        var statements = new List<SqlStatement>(settlements.Count);
        foreach (var s in settlements)
        {
            statements.Add(Settle(dialect, s));
        }

        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        if (dialect.ClaimDataSource is { } source)
        {
            // As the claim, without waiting for the WAL flush: a settlement lost in a crash of the database leaves the
            // delivery pending, and it is delivered again (at least once; the receiver deduplicates on webhook-id).
            // One round trip: the statements go as one batch, which PostgreSQL runs as one implicit transaction (no BEGIN
            // and COMMIT round trips around it).
            await using var connection = await source.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            return (await SqlExecution.ExecuteAsync(connection, null, statements, null, cancellationToken).ConfigureAwait(false)).Sum();
        }

        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var connection = db.Database.GetDbConnection();
            await using var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            var affected = await SqlExecution.ExecuteAsync(connection, transaction, statements, null, cancellationToken).ConfigureAwait(false);
            await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            return affected.Sum();
        }
        finally
        {
            await db.Database.CloseConnectionAsync().ConfigureAwait(false);
        }
    }

    public Task<long?> GetNextDeliveryDueAsync(CancellationToken cancellationToken) =>
        ReadAsync(new SqlStatement(dialect).Sql($"""
                SELECT MIN(CASE WHEN lease_until_ms IS NOT NULL AND lease_until_ms > due_at_ms THEN lease_until_ms ELSE due_at_ms END) FROM (
                  SELECT d.due_at_ms, d.lease_until_ms FROM wf_deliveries d JOIN wf_subscriptions s ON s.id = d.subscription_id
                   WHERE d.status = 'Pending' AND s.enabled AND {FirstOfItsInstance}
                   ORDER BY d.due_at_ms, d.sequence LIMIT {NextDueCandidates}) heads
                """),
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) && !await reader.IsDBNullAsync(0, ct).ConfigureAwait(false) ? reader.GetInt64(0) : (long?)null,
            cancellationToken);

    /// <summary>
    /// The claimable deliveries' first <see cref="NextDueCandidates"/> by due time decide the next look: when all of them are
    /// leased, their leases' end is early enough (the dispatcher looks again then).
    /// </summary>
    private const int NextDueCandidates = 100;

    /// <summary>
    /// A delivery is claimable only while no earlier one of its instance is pending for its subscription. Written as a scalar
    /// subquery, which PostgreSQL runs per candidate as one seek of ix_wf_deliveries_subscription_id_instance_id_sequence:
    /// as NOT EXISTS it became an anti-join, and under a generic plan made while the table was empty PostgreSQL joined it
    /// without an index condition, comparing every pending delivery with every other (seconds per claim at 15,000).
    /// </summary>
    private const string FirstOfItsInstance =
        "d.sequence = (SELECT MIN(e.sequence) FROM wf_deliveries e WHERE e.subscription_id = d.subscription_id AND e.instance_id = d.instance_id AND e.status = 'Pending')";

    /// <summary>
    /// Leases to <paramref name="owner"/> the first <paramref name="max"/> claimable deliveries by due time: pending and due,
    /// unleased, their subscription enabled, each the first pending of its instance for its subscription. The candidates
    /// come in order from ix_wf_deliveries_due_at_ms_sequence (schema step 12), so the scan stops once it has enough.
    /// </summary>
    internal static SqlStatement ClaimDeliveries(SqlDialect dialect, string owner, long token, long now, TimeSpan lease, int max)
    {
        ArgumentNullException.ThrowIfNull(dialect);
        return new SqlStatement(dialect)
            .Sql("UPDATE wf_deliveries SET lease_owner = ").Param(owner).Sql(", lease_token = ").Param(token)
            .Sql(", lease_until_ms = ").Param(now + (long)lease.TotalMilliseconds).Sql(", attempts = attempts + 1")
            .Sql(" WHERE sequence IN (SELECT d.sequence FROM wf_deliveries d JOIN wf_subscriptions s ON s.id = d.subscription_id")
            .Sql(" WHERE d.status = 'Pending' AND d.due_at_ms <= ").Param(now)
            .Sql(" AND (d.lease_until_ms IS NULL OR d.lease_until_ms < ").Param(now).Sql(") AND s.enabled AND " + FirstOfItsInstance)
            .Sql(" ORDER BY d.due_at_ms, d.sequence LIMIT ").Param(max).Sql(dialect.SkipLocked("d")).Sql(")")
            .Sql(" RETURNING " + Rows.DeliveryColumns);
    }

    public async Task<long> CountPendingDeliveriesAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // Through ix_wf_deliveries_due_at_ms_sequence (pending ones only): as long as the backlog, not the log.
        return await db.Deliveries.LongCountAsync(d => d.Status == DeliveryStatus.Pending, cancellationToken).ConfigureAwait(false);
    }

    public async Task<KeysetPage<EventDelivery>> ListDeliveriesAsync(string tenant, Guid subscriptionId, DeliveryStatus? status, long? beforeSequence,
        int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Deliveries.AsNoTracking().Where(d => d.SubscriptionId == subscriptionId && d.Tenant == tenant);
        if (status is { } wanted)
        {
            q = q.Where(d => d.Status == wanted);
        }

        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        if (beforeSequence is { } before)
        {
            q = q.Where(d => d.Sequence < before);
        }

        var items = await q.OrderByDescending(d => d.Sequence).Take(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(items, total, limit);
    }

    public async Task<bool> ReplayDeliveryAsync(string tenant, Guid subscriptionId, Guid deliveryId, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        return await db.Deliveries
            .Where(d => d.Id == deliveryId && d.SubscriptionId == subscriptionId && d.Tenant == tenant && d.Status == DeliveryStatus.DeadLettered)
            .ExecuteUpdateAsync(u => u.SetProperty(d => d.Status, DeliveryStatus.Pending).SetProperty(d => d.DueAtMs, now)
                .SetProperty(d => d.Attempts, 0).SetProperty(d => d.LeaseOwner, (string?)null).SetProperty(d => d.LeaseUntilMs, (long?)null),
                cancellationToken).ConfigureAwait(false) > 0;
    }

    public async Task<int> ReleaseDeliveryLeasesAsync(string owner, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Deliveries.Where(d => d.LeaseOwner == owner && d.Status == DeliveryStatus.Pending)
            .ExecuteUpdateAsync(u => u.SetProperty(d => d.LeaseOwner, (string?)null).SetProperty(d => d.LeaseUntilMs, (long?)null)
                .SetProperty(d => d.Attempts, d => d.Attempts - 1), cancellationToken).ConfigureAwait(false);
    }

    private static async Task<List<EventDelivery>> ReadDeliveriesAsync(DbDataReader reader, CancellationToken cancellationToken)
    {
        var read = new List<EventDelivery>();
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            read.Add(Rows.ReadDelivery(reader));
        }

        return read;
    }
}
