using MongoDB.Driver;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Event subscriptions (<see cref="ISubscriptionStore"/>) in the "subscriptions" collection, each read within one tenant.</summary>
public sealed partial class MongoWorkflowStore : ISubscriptionStore
{
    private static readonly FilterDefinitionBuilder<SubscriptionDocument> SubscriptionFilter = Builders<SubscriptionDocument>.Filter;

    public async Task<bool> CreateSubscriptionAsync(Subscription subscription, CancellationToken cancellationToken)
    {
        try
        {
            await _subscriptions.InsertOneAsync(SubscriptionDocument.From(subscription), cancellationToken: cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            return false;
        }
    }

    public async Task<Subscription?> GetSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        (await _subscriptions.Find(OfTenant(tenant, id)).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false))?.ToModel();

    public async Task<KeysetPage<Subscription>> ListSubscriptionsAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        // The unique (tenant, name) index serves both the count and the seek.
        var filter = SubscriptionFilter.Eq(s => s.Tenant, tenant);
        var total = await _subscriptions.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (afterName is not null)
        {
            filter &= SubscriptionFilter.Gt(s => s.Name, afterName);
        }

        var page = await _subscriptions.Find(filter).SortBy(s => s.Name).Limit(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(page.ConvertAll(s => s.ToModel()), (int)total, limit);
    }

    public async Task<SubscriptionWrite> UpdateSubscriptionAsync(Subscription subscription, int expectedVersion, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        try
        {
            var replaced = await _subscriptions.ReplaceOneAsync(
                OfTenant(subscription.Tenant, subscription.Id) & SubscriptionFilter.Eq(s => s.Version, expectedVersion),
                SubscriptionDocument.From(subscription), cancellationToken: cancellationToken).ConfigureAwait(false);
            if (replaced.MatchedCount > 0)
            {
                return SubscriptionWrite.Written;
            }
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            return SubscriptionWrite.DuplicateName;
        }

        return await GetSubscriptionAsync(subscription.Tenant, subscription.Id, cancellationToken).ConfigureAwait(false) is null
            ? SubscriptionWrite.NotFound
            : SubscriptionWrite.Conflict;
    }

    public async Task<bool> DeleteSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        if ((await _subscriptions.DeleteOneAsync(OfTenant(tenant, id), cancellationToken).ConfigureAwait(false)).DeletedCount == 0)
        {
            return false;
        }

        // Its deliveries go with it (after it: a claim skips the deliveries of a subscription it cannot find enabled).
        await _deliveries.DeleteManyAsync(Builders<DeliveryDocument>.Filter.Eq(d => d.SubscriptionId, id), cancellationToken).ConfigureAwait(false);
        return true;
    }

    public async Task<IReadOnlyList<Subscription>> GetAllSubscriptionsAsync(CancellationToken cancellationToken) =>
        (await _subscriptions.Find(SubscriptionFilter.Empty).ToListAsync(cancellationToken).ConfigureAwait(false)).ConvertAll(s => s.ToModel());

    private static FilterDefinition<SubscriptionDocument> OfTenant(string tenant, Guid id) =>
        SubscriptionFilter.Eq(s => s.Id, id) & SubscriptionFilter.Eq(s => s.Tenant, tenant);
}
