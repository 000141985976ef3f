using System.Diagnostics.CodeAnalysis;
using MongoDB.Driver;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// The outbox (<see cref="IDeliveryQueue"/>) in the "deliveries" collection. A claim reads the due candidates, keeps the
/// earliest pending one of each instance and subscription whose subscription is enabled, and leases each with a
/// conditional update, so that two nodes never hold one delivery.
/// </summary>
public sealed partial class MongoWorkflowStore : IDeliveryQueue
{
    private static readonly FilterDefinitionBuilder<DeliveryDocument> DeliveryFilter = Builders<DeliveryDocument>.Filter;

    /// <summary>Candidates read per claimed delivery: some are held back by an earlier one of their instance.</summary>
    private const int CandidatesPerClaim = 4;

    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "A fencing value that tells this claim from an earlier one, not a secret.")]
    public async Task<IReadOnlyList<EventDelivery>> ClaimDueDeliveriesAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken)
    {
        var now = NowMs();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        var enabled = (await _subscriptions.Find(SubscriptionFilter.Eq(s => s.Enabled, true)).Project(s => s.Id)
            .ToListAsync(cancellationToken).ConfigureAwait(false)).ToHashSet();
        if (enabled.Count == 0)
        {
            return [];
        }

        var due = DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending) & DeliveryFilter.Lte(d => d.DueAtMs, now)
            & (DeliveryFilter.Eq(d => d.LeaseUntilMs, null) | DeliveryFilter.Lt(d => d.LeaseUntilMs, now))
            & DeliveryFilter.In(d => d.SubscriptionId, enabled);
        var candidates = await _deliveries.Find(due).SortBy(d => d.DueAtMs).ThenBy(d => d.Sequence).Limit(max * CandidatesPerClaim)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var claimed = new List<EventDelivery>();
        foreach (var candidate in candidates.DistinctBy(c => (c.SubscriptionId, c.InstanceId)))
        {
            if (claimed.Count == max)
            {
                break;
            }

            if (await WaitsBehindAnEarlierAsync(candidate, cancellationToken).ConfigureAwait(false))
            {
                continue;
            }

            var unleased = DeliveryFilter.Eq(d => d.Id, candidate.Id) & DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending)
                & (DeliveryFilter.Eq(d => d.LeaseUntilMs, null) | DeliveryFilter.Lt(d => d.LeaseUntilMs, now));
            var taken = await _deliveries.FindOneAndUpdateAsync(unleased, Builders<DeliveryDocument>.Update
                    .Set(d => d.LeaseOwner, owner).Set(d => d.LeaseToken, token).Set(d => d.LeaseUntilMs, now + (long)lease.TotalMilliseconds)
                    .Inc(d => d.Attempts, 1),
                new FindOneAndUpdateOptions<DeliveryDocument> { ReturnDocument = ReturnDocument.After }, cancellationToken).ConfigureAwait(false);
            if (taken is not null)
            {
                claimed.Add(taken.ToModel());
            }
        }

        return claimed;
    }

    public async Task<int> SettleDeliveriesAsync(IReadOnlyList<DeliverySettlement> settlements, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settlements);
        if (settlements.Count == 0)
        {
            return 0;
        }

        var updates = settlements.Select(s =>
        {
            var update = Builders<DeliveryDocument>.Update.Set(d => d.Status, s.Status).Set(d => d.LeaseOwner, null).Set(d => d.LeaseUntilMs, null)
                .Set(d => d.LastStatus, s.HttpStatus).Set(d => d.LastError, s.Error is { Length: > 1000 } e ? e[..1000] : s.Error);
            update = s.Status == DeliveryStatus.Delivered
                ? update.Set(d => d.DeliveredAt, s.DeliveredAt).Set(d => d.LatencyMs, s.LatencyMs)
                : s.RetryAtMs is { } retryAt ? update.Set(d => d.DueAtMs, retryAt) : update;
            return (WriteModel<DeliveryDocument>)new UpdateOneModel<DeliveryDocument>(
                DeliveryFilter.Eq(d => d.Id, s.Id) & DeliveryFilter.Eq(d => d.LeaseToken, s.LeaseToken) & DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending),
                update);
        }).ToList();
        var result = await _deliveries.BulkWriteAsync(updates, new BulkWriteOptions { IsOrdered = false }, cancellationToken).ConfigureAwait(false);
        return (int)result.ModifiedCount;
    }

    /// <summary>Whether an earlier delivery of its instance is still pending for its subscription: then it waits for that one.</summary>
    private Task<bool> WaitsBehindAnEarlierAsync(DeliveryDocument delivery, CancellationToken cancellationToken) =>
        _deliveries.Find(DeliveryFilter.Eq(d => d.SubscriptionId, delivery.SubscriptionId) & DeliveryFilter.Eq(d => d.InstanceId, delivery.InstanceId)
                & DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending) & DeliveryFilter.Lt(d => d.Sequence, delivery.Sequence))
            .Limit(1).AnyAsync(cancellationToken);

    public async Task<long?> GetNextDeliveryDueAsync(CancellationToken cancellationToken)
    {
        // The earliest due first of its instance; a later one waits behind its earlier one. When none of the first
        // candidates is first of its instance, the last candidate's time is early enough: the dispatcher looks again then.
        var candidates = await _deliveries.Find(DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending)).SortBy(d => d.DueAtMs)
            .Limit(CandidatesPerClaim * 10).ToListAsync(cancellationToken).ConfigureAwait(false);
        foreach (var candidate in candidates)
        {
            if (!await WaitsBehindAnEarlierAsync(candidate, cancellationToken).ConfigureAwait(false))
            {
                return Math.Max(candidate.DueAtMs, candidate.LeaseUntilMs ?? 0);
            }
        }

        return candidates.Count == 0 ? null : candidates[^1].DueAtMs;
    }

    // Through the status_dueAtMs index: as long as the backlog, not the log.
    public Task<long> CountPendingDeliveriesAsync(CancellationToken cancellationToken) =>
        _deliveries.CountDocumentsAsync(DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending), cancellationToken: cancellationToken);

    public async Task<KeysetPage<EventDelivery>> ListDeliveriesAsync(string tenant, Guid subscriptionId, DeliveryStatus? status, long? beforeSequence,
        int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var filter = DeliveryFilter.Eq(d => d.SubscriptionId, subscriptionId) & DeliveryFilter.Eq(d => d.Tenant, tenant);
        if (status is { } wanted)
        {
            filter &= DeliveryFilter.Eq(d => d.Status, wanted);
        }

        var total = await _deliveries.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (beforeSequence is { } before)
        {
            filter &= DeliveryFilter.Lt(d => d.Sequence, before);
        }

        var page = await _deliveries.Find(filter).SortByDescending(d => d.Sequence).Limit(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(page.ConvertAll(d => d.ToModel()), (int)total, limit);
    }

    public async Task<bool> ReplayDeliveryAsync(string tenant, Guid subscriptionId, Guid deliveryId, CancellationToken cancellationToken)
    {
        var filter = DeliveryFilter.Eq(d => d.Id, deliveryId) & DeliveryFilter.Eq(d => d.SubscriptionId, subscriptionId)
            & DeliveryFilter.Eq(d => d.Tenant, tenant) & DeliveryFilter.Eq(d => d.Status, DeliveryStatus.DeadLettered);
        var update = Builders<DeliveryDocument>.Update.Set(d => d.Status, DeliveryStatus.Pending).Set(d => d.DueAtMs, NowMs())
            .Set(d => d.Attempts, 0).Set(d => d.LeaseOwner, null).Set(d => d.LeaseUntilMs, null);
        return (await _deliveries.UpdateOneAsync(filter, update, cancellationToken: cancellationToken).ConfigureAwait(false)).ModifiedCount > 0;
    }

    public async Task<int> ReleaseDeliveryLeasesAsync(string owner, CancellationToken cancellationToken)
    {
        var update = Builders<DeliveryDocument>.Update.Set(d => d.LeaseOwner, null).Set(d => d.LeaseUntilMs, null).Inc(d => d.Attempts, -1);
        var result = await _deliveries.UpdateManyAsync(
            DeliveryFilter.Eq(d => d.LeaseOwner, owner) & DeliveryFilter.Eq(d => d.Status, DeliveryStatus.Pending), update,
            cancellationToken: cancellationToken).ConfigureAwait(false);
        return (int)result.ModifiedCount;
    }
}
