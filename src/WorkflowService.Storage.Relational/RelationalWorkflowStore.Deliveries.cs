using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// The outbox (<see cref="IDeliveryQueue"/>), schema 18: each delivery's log row in wf_deliveries (its event, status and
/// attempts), and while it waits a small row in wf_delivery_queue (its order, due time and lease). A commit writes both;
/// the claim leases queue rows; a settlement updates the log row and deletes the queue row (delivered, dead-lettered) or
/// gives its lease back (a retry). Claims and settlements are hand-written statements; lists and replays use EF Core.
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
        List<EventDelivery> claimed;
        if (dialect.WritesInCommonTableExpressions)
        {
            // The claim returns the deliveries whole: the leased queue rows joined with their log rows.
            claimed = dialect.ClaimDataSource is { } source
                ? await ReadOnAsync(source, statement, ReadDeliveriesAsync, cancellationToken).ConfigureAwait(false)
                : await ReadAsync(statement, ReadDeliveriesAsync, cancellationToken).ConfigureAwait(false);
        }
        else
        {
            // SQLite: the claim returns the queue rows it leased (its RETURNING cannot read another table); their log rows
            // are read after it. A log row deleted meanwhile (its subscription or instance went) is not delivered.
            var leased = await ReadAsync(statement, ReadLeasesAsync, cancellationToken).ConfigureAwait(false);
            claimed = leased.Count == 0 ? [] : await ReadAsync(LogRowsOf(dialect, leased), (reader, ct) => ReadLeasedAsync(reader, leased, ct), cancellationToken)
                .ConfigureAwait(false);
        }

        claimed.Sort((a, b) => a.Sequence.CompareTo(b.Sequence));
        return claimed;
    }

    /// <summary>A commit writes a delivery leased to its node when it may (<see cref="HandOver"/>).</summary>
    public bool LeasesOnCommit => true;

    /// <summary>
    /// The commit's deliveries: their log rows in one statement, then each one's queue row, in the commit's order. A
    /// delivery the engine asks to hand over (leased to its node) is queued leased when it is first of its instance for its
    /// subscription and the subscription is enabled (<see cref="HandOver"/>), else unleased; the others unleased. Returns
    /// the statement of each hand-over, whose count says whether it was written leased.
    /// </summary>
    internal static List<(EventDelivery Delivery, int Statement)>? AddDeliveries(SqlDialect dialect, List<SqlStatement> statements,
        List<EventDelivery> deliveries, bool newInstance)
    {
        if (dialect.WritesInCommonTableExpressions && deliveries.TrueForAll(d => d.LeaseOwner is null))
        {
            // None to hand over (the default): the log rows and their queue rows in one statement, the queue's from the log's.
            var statement = Rows.Insert(new SqlStatement(dialect).Sql("WITH d AS ("), "wf_deliveries", Rows.DeliveryInsertColumns, deliveries,
                Rows.DeliveryValues);
            statements.Add(statement.Sql($" RETURNING id, subscription_id, instance_id, sequence, due_at_ms) INSERT INTO wf_delivery_queue ({Rows.DeliveryQueueColumns})")
                .Sql(" SELECT id, subscription_id, instance_id, sequence, due_at_ms, 0, NULL, NULL, NULL FROM d"));
            return null;
        }

        statements.Add(Rows.Insert(dialect, "wf_deliveries", Rows.DeliveryInsertColumns, deliveries, Rows.DeliveryValues));
        List<(EventDelivery, int)>? handedOver = null;
        foreach (var delivery in deliveries)
        {
            if (delivery.LeaseOwner is null || newInstance)
            {
                // A new instance has no earlier delivery: each one is queued as the engine asked, leased or not.
                statements.Add(Enqueue(dialect, delivery));
                continue;
            }

            (handedOver ??= []).Add((delivery, statements.Count));
            statements.Add(HandOver(dialect, delivery));
            statements.Add(EnqueueUnlessQueued(dialect, delivery));
        }

        return handedOver;
    }

    /// <summary>The queue row of a delivery whose log row this transaction wrote, as the engine set its lease (or none).</summary>
    internal static SqlStatement Enqueue(SqlDialect dialect, EventDelivery d)
    {
        ArgumentNullException.ThrowIfNull(d);
        return new SqlStatement(dialect).Sql($"INSERT INTO wf_delivery_queue ({Rows.DeliveryQueueColumns}) SELECT id, subscription_id, instance_id, sequence, due_at_ms, ")
            .List([d.LeaseOwner is null ? 0 : d.Attempts, TypedNull.Of(d.LeaseOwner), TypedNull.Of(d.LeaseToken), TypedNull.Of(d.LeaseUntilMs)])
            .Sql(" FROM wf_deliveries WHERE id = ").Param(d.Id);
    }

    /// <summary>
    /// A delivery's queue row leased to the committing node (its lease fields as the engine set them) when its subscription
    /// is enabled and no earlier delivery of its instance waits for it; nothing otherwise (<see cref="EnqueueUnlessQueued"/>
    /// writes it then). The check reads the queue's primary key and the subscription's.
    /// </summary>
    internal static SqlStatement HandOver(SqlDialect dialect, EventDelivery d)
    {
        ArgumentNullException.ThrowIfNull(d);
        return new SqlStatement(dialect).Sql($"INSERT INTO wf_delivery_queue ({Rows.DeliveryQueueColumns}) SELECT d.id, d.subscription_id, d.instance_id, d.sequence, d.due_at_ms, ")
            .List([d.Attempts, TypedNull.Of(d.LeaseOwner), TypedNull.Of(d.LeaseToken), TypedNull.Of(d.LeaseUntilMs)])
            .Sql(" FROM wf_deliveries d WHERE d.id = ").Param(d.Id)
            .Sql(" AND EXISTS (SELECT 1 FROM wf_subscriptions s WHERE s.id = ").Param(d.SubscriptionId).Sql(" AND s.enabled)")
            .Sql(" AND NOT EXISTS (SELECT 1 FROM wf_delivery_queue e WHERE e.subscription_id = ").Param(d.SubscriptionId)
            .Sql(" AND e.instance_id = ").Param(d.InstanceId).Sql(")");
    }

    /// <summary>
    /// The same delivery's queue row unleased, for the claim, unless <see cref="HandOver"/> wrote it. Tested by its key, not
    /// by the hand-over's conditions again: an earlier delivery settled between the two statements must not leave it unqueued.
    /// </summary>
    internal static SqlStatement EnqueueUnlessQueued(SqlDialect dialect, EventDelivery d)
    {
        ArgumentNullException.ThrowIfNull(d);
        return new SqlStatement(dialect)
            .Sql($"INSERT INTO wf_delivery_queue ({Rows.DeliveryQueueColumns}) SELECT d.id, d.subscription_id, d.instance_id, d.sequence, d.due_at_ms, 0, NULL, NULL, NULL")
            .Sql(" FROM wf_deliveries d WHERE d.id = ").Param(d.Id)
            .Sql(" AND NOT EXISTS (SELECT 1 FROM wf_delivery_queue x WHERE x.id = d.id)");
    }

    /// <summary>
    /// The statements that record how one claimed delivery's attempt went; the last one's count says whether it applied. A
    /// settlement applies to the claim it settles: its lease token, on a queue row still leased (a claim sets lease_until_ms,
    /// a settlement clears it or deletes the row). Delivered or dead-lettered: the queue row is deleted and the log row takes
    /// the outcome and the attempts. Pending again (a retry): the queue row gives its lease back and takes its new due time.
    /// The log row's update changes no indexed column, so PostgreSQL can keep it on its page and write no index (schema 18).
    /// </summary>
    internal static IReadOnlyList<SqlStatement> Settle(SqlDialect dialect, DeliverySettlement s)
    {
        ArgumentNullException.ThrowIfNull(dialect);
        ArgumentNullException.ThrowIfNull(s);
        var settled = s.Status != DeliveryStatus.Pending;
        if (settled && dialect.WritesInCommonTableExpressions)
        {
            // One statement: the queue row deleted under its lease, and the log row updated from it. Each written as a seek of
            // a key that a generic plan made on empty tables keeps (a join here became a scan of the log's primary key).
            var statement = new SqlStatement(dialect)
                .Sql("WITH q AS (DELETE FROM wf_delivery_queue WHERE id = ").Param(s.Id).Sql(" AND lease_token = ").Param(s.LeaseToken)
                .Sql(" AND lease_until_ms IS NOT NULL RETURNING attempts) UPDATE wf_deliveries SET attempts = (SELECT q.attempts FROM q)");
            LogOutcome(statement, s);
            return [statement.Sql(" WHERE id = ").Param(s.Id).Sql(" AND EXISTS (SELECT 1 FROM q)")];
        }

        var log = new SqlStatement(dialect).Sql("UPDATE wf_deliveries SET attempts = (SELECT q.attempts FROM wf_delivery_queue q WHERE q.id = wf_deliveries.id)");
        LogOutcome(log, s);
        log.Sql(" WHERE id = ").Param(s.Id).Sql(" AND EXISTS (SELECT 1 FROM wf_delivery_queue q WHERE q.id = wf_deliveries.id AND q.lease_token = ")
            .Param(s.LeaseToken).Sql(" AND q.lease_until_ms IS NOT NULL)");
        var queue = new SqlStatement(dialect);
        if (settled)
        {
            queue.Sql("DELETE FROM wf_delivery_queue");
        }
        else
        {
            queue.Sql("UPDATE wf_delivery_queue SET lease_owner = NULL, lease_until_ms = NULL");
            if (s.RetryAtMs is { } retryAt)
            {
                queue.Sql(", due_at_ms = ").Param(retryAt);
            }
        }

        queue.Sql(" WHERE id = ").Param(s.Id).Sql(" AND lease_token = ").Param(s.LeaseToken).Sql(" AND lease_until_ms IS NOT NULL");
        return [log, queue];
    }

    /// <summary>The log row's columns a settlement sets, after its attempts.</summary>
    private static void LogOutcome(SqlStatement statement, DeliverySettlement s)
    {
        statement.Sql(", status = ").Param(s.Status.ToString()).Sql(", last_status = ").Param(TypedNull.Of(s.HttpStatus))
            .Sql(", last_error = ").Param(TypedNull.Of(s.Error is { Length: > 1000 } e ? e[..1000] : s.Error));
        if (s.Status == DeliveryStatus.Delivered)
        {
            statement.Sql(", delivered_at = ").Param(TypedNull.Of(s.DeliveredAt)).Sql(", latency_ms = ").Param(TypedNull.Of(s.LatencyMs));
        }
        else if (s.Status == DeliveryStatus.Pending && s.RetryAtMs is { } retryAt)
        {
            // What the log shows as its next attempt.
            statement.Sql(", due_at_ms = ").Param(retryAt);
        }
    }

    public async Task<int> SettleDeliveriesAsync(IReadOnlyList<DeliverySettlement> settlements, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settlements);
        if (settlements.Count == 0)
        {
            return 0;
        }

        // Each one a seek of the delivery's id and of its queue row's key. Not one statement joining the batch's rows:
        // PostgreSQL kept that statement's generic plan, made while the table was empty, a hash join over a scan of the whole table.
        var statements = new List<SqlStatement>(settlements.Count * 2);
        var counted = new List<int>(settlements.Count);
        foreach (var s in settlements)
        {
            statements.AddRange(Settle(dialect, s));
            counted.Add(statements.Count - 1);
        }

        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        int[] affected;
        if (dialect.ClaimDataSource is { } source)
        {
            // As the claim, without waiting for the WAL flush: a settlement lost in a crash of the database leaves the
            // delivery pending, and it is delivered again (at least once; the receiver deduplicates on webhook-id).
            // One round trip: the statements go as one batch, which PostgreSQL runs as one implicit transaction (no BEGIN
            // and COMMIT round trips around it).
            await using var connection = await source.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            affected = await SqlExecution.ExecuteAsync(connection, null, statements, null, cancellationToken).ConfigureAwait(false);
        }
        else
        {
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                var connection = db.Database.GetDbConnection();
                await using var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
                affected = await SqlExecution.ExecuteAsync(connection, transaction, statements, null, cancellationToken).ConfigureAwait(false);
                await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                await db.Database.CloseConnectionAsync().ConfigureAwait(false);
            }
        }

        return counted.Sum(i => affected[i]);
    }

    public async Task<long?> GetNextDeliveryDueAsync(CancellationToken cancellationToken)
    {
        var statement = new SqlStatement(dialect).Sql($"""
                SELECT MIN(CASE WHEN lease_until_ms IS NOT NULL AND lease_until_ms > due_at_ms THEN lease_until_ms ELSE due_at_ms END) FROM (
                  SELECT q.due_at_ms, q.lease_until_ms FROM wf_delivery_queue q JOIN wf_subscriptions s ON s.id = q.subscription_id
                   WHERE s.enabled AND {FirstOfItsInstance}
                   ORDER BY q.due_at_ms, q.sequence LIMIT {NextDueCandidates}) heads
                """);
        // Through the claims' pool, whose plans read the queue by its indexes (PostgreSqlDialect).
        return dialect.ClaimDataSource is { } source
            ? await ReadOnAsync(source, statement, ReadNextDueAsync, cancellationToken).ConfigureAwait(false)
            : await ReadAsync(statement, ReadNextDueAsync, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<long?> ReadNextDueAsync(DbDataReader reader, CancellationToken cancellationToken) =>
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false) && !await reader.IsDBNullAsync(0, cancellationToken).ConfigureAwait(false)
            ? reader.GetInt64(0)
            : null;

    /// <summary>
    /// The claimable deliveries' first <see cref="NextDueCandidates"/> by due time decide the next look: when all of them are
    /// leased, their leases' end is early enough (the dispatcher looks again then).
    /// </summary>
    private const int NextDueCandidates = 100;

    /// <summary>
    /// A delivery is claimable only while no earlier one of its instance waits for its subscription. Written as a scalar
    /// subquery, which PostgreSQL runs per candidate as one seek of ix_wf_delivery_queue_subscription_id_instance_id_sequence:
    /// as NOT EXISTS it became an anti-join, and under a generic plan made while the table was empty PostgreSQL joined it
    /// without an index condition, comparing every pending delivery with every other (seconds per claim at 15,000).
    /// </summary>
    private const string FirstOfItsInstance =
        "q.sequence = (SELECT MIN(e.sequence) FROM wf_delivery_queue e WHERE e.subscription_id = q.subscription_id AND e.instance_id = q.instance_id)";

    /// <summary>
    /// Leases to <paramref name="owner"/> the first <paramref name="max"/> claimable deliveries by due time: due, unleased,
    /// their subscription enabled, each the first waiting one of its instance for its subscription. The candidates come in
    /// order from ix_wf_delivery_queue_due_at_ms_sequence, so the scan stops once it has enough. On PostgreSQL the update
    /// joins each leased row's log row by its id and returns the deliveries whole (<see cref="Rows.ClaimedDeliveryColumns"/>);
    /// elsewhere it returns the leased queue rows (<see cref="ReadLeasesAsync"/>).
    /// </summary>
    internal static SqlStatement ClaimDeliveries(SqlDialect dialect, string owner, long token, long now, TimeSpan lease, int max)
    {
        ArgumentNullException.ThrowIfNull(dialect);
        var (open, close) = dialect.OneOf("id");
        var join = dialect.WritesInCommonTableExpressions;
        return new SqlStatement(dialect).Sql(join ? "WITH w AS (" : "")
            .Sql("UPDATE wf_delivery_queue SET lease_owner = ").Param(owner).Sql(", lease_token = ").Param(token)
            .Sql(", lease_until_ms = ").Param(now + (long)lease.TotalMilliseconds).Sql(", attempts = attempts + 1 WHERE ").Sql(open)
            .Sql("SELECT q.id FROM wf_delivery_queue q JOIN wf_subscriptions s ON s.id = q.subscription_id WHERE q.due_at_ms <= ").Param(now)
            .Sql(" AND (q.lease_until_ms IS NULL OR q.lease_until_ms < ").Param(now).Sql(") AND s.enabled AND " + FirstOfItsInstance)
            .Sql(" ORDER BY q.due_at_ms, q.sequence LIMIT ").Param(max).Sql(dialect.SkipLocked("q")).Sql(close)
            .Sql(" RETURNING id, due_at_ms, attempts, lease_owner, lease_token, lease_until_ms")
            // Each leased row's log row by its id: a LATERAL subquery with a LIMIT is planned as a seek for each row, not a
            // join a generic plan made on empty tables could turn into a scan of the log.
            .Sql(join ? $") SELECT {Rows.ClaimedDeliveryColumns} FROM w CROSS JOIN LATERAL (SELECT * FROM wf_deliveries l WHERE l.id = w.id LIMIT 1) d" : "");
    }

    /// <summary>The log rows of the queue rows a claim leased (<see cref="ReadLeasesAsync"/>), in <see cref="Rows.LogDeliveryColumns"/>.</summary>
    private static SqlStatement LogRowsOf(SqlDialect dialect, Dictionary<Guid, DeliveryQueueEntry> leased) =>
        new SqlStatement(dialect).Sql($"SELECT {Rows.LogDeliveryColumns} FROM wf_deliveries d WHERE d.id IN (")
            .List([.. leased.Keys.Select(id => (object?)id)]).Sql(")");

    private static async Task<Dictionary<Guid, DeliveryQueueEntry>> ReadLeasesAsync(DbDataReader reader, CancellationToken cancellationToken)
    {
        var leased = new Dictionary<Guid, DeliveryQueueEntry>();
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            leased[reader.GetGuid(0)] = new DeliveryQueueEntry
            {
                Id = reader.GetGuid(0),
                DueAtMs = reader.GetInt64(1),
                Attempts = reader.GetInt32(2),
                LeaseOwner = reader.GetString(3),
                LeaseToken = reader.GetInt64(4),
                LeaseUntilMs = reader.GetInt64(5),
            };
        }

        return leased;
    }

    private static async Task<List<EventDelivery>> ReadLeasedAsync(DbDataReader reader, Dictionary<Guid, DeliveryQueueEntry> leased, CancellationToken cancellationToken)
    {
        var read = await ReadDeliveriesAsync(reader, cancellationToken).ConfigureAwait(false);
        foreach (var delivery in read)
        {
            Apply(delivery, leased[delivery.Id]);
        }

        return read;
    }

    /// <summary>A waiting delivery's due time, attempts and lease, from its queue row.</summary>
    private static void Apply(EventDelivery delivery, DeliveryQueueEntry entry)
    {
        delivery.DueAtMs = entry.DueAtMs;
        delivery.Attempts = entry.Attempts;
        delivery.LeaseOwner = entry.LeaseOwner;
        delivery.LeaseToken = entry.LeaseToken;
        delivery.LeaseUntilMs = entry.LeaseUntilMs;
    }

    public async Task<long> CountPendingDeliveriesAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // The queue holds the waiting ones only: as long as the backlog, not the log.
        return await db.DeliveryQueue.LongCountAsync(cancellationToken).ConfigureAwait(false);
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
        // The waiting ones' due time, attempts and lease are in their queue rows.
        var waiting = items.Where(d => d.Status == DeliveryStatus.Pending).Select(d => d.Id).ToList();
        if (waiting.Count > 0)
        {
            var entries = await db.DeliveryQueue.AsNoTracking().Where(e => waiting.Contains(e.Id))
                .ToDictionaryAsync(e => e.Id, cancellationToken).ConfigureAwait(false);
            foreach (var item in items)
            {
                if (entries.TryGetValue(item.Id, out var entry))
                {
                    Apply(item, entry);
                }
            }
        }

        return Keyset(items, total, limit);
    }

    public async Task<bool> ReplayDeliveryAsync(string tenant, Guid subscriptionId, Guid deliveryId, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        return await RetryTransientAsync(async (db, ct) =>
        {
            // Pending again in the log, and waiting again in the queue at its old place in its instance's order, or neither.
            await using var transaction = await db.Database.BeginTransactionAsync(ct).ConfigureAwait(false);
            var replayed = await db.Deliveries
                .Where(d => d.Id == deliveryId && d.SubscriptionId == subscriptionId && d.Tenant == tenant && d.Status == DeliveryStatus.DeadLettered)
                .ExecuteUpdateAsync(u => u.SetProperty(d => d.Status, DeliveryStatus.Pending).SetProperty(d => d.DueAtMs, now).SetProperty(d => d.Attempts, 0), ct)
                .ConfigureAwait(false) > 0;
            if (replayed)
            {
                var row = await db.Deliveries.AsNoTracking().Where(d => d.Id == deliveryId)
                    .Select(d => new DeliveryQueueEntry { Id = d.Id, SubscriptionId = d.SubscriptionId, InstanceId = d.InstanceId, Sequence = d.Sequence, DueAtMs = now })
                    .SingleAsync(ct).ConfigureAwait(false);
                db.DeliveryQueue.Add(row);
                await db.SaveChangesAsync(ct).ConfigureAwait(false);
            }

            await transaction.CommitAsync(ct).ConfigureAwait(false);
            return replayed;
        }, cancellationToken).ConfigureAwait(false);
    }

    public async Task<int> ReleaseDeliveryLeasesAsync(string owner, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.DeliveryQueue.Where(e => e.LeaseOwner == owner)
            .ExecuteUpdateAsync(u => u.SetProperty(e => e.LeaseOwner, (string?)null).SetProperty(e => e.LeaseUntilMs, (long?)null)
                .SetProperty(e => e.Attempts, e => e.Attempts - 1), cancellationToken).ConfigureAwait(false);
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
