using WorkflowService.Engine.Events;

namespace WorkflowService.Engine.Persistence;

/// <summary>Event subscriptions, per tenant: every read of one takes its tenant, and another tenant's reads as missing.</summary>
public interface ISubscriptionStore
{
    /// <summary>Stores a new subscription; false (and nothing written) when its tenant already has one of that name.</summary>
    Task<bool> CreateSubscriptionAsync(Subscription subscription, CancellationToken cancellationToken);

    Task<Subscription?> GetSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken);

    /// <summary>Up to <paramref name="limit"/> of the tenant's subscriptions by name, after <paramref name="afterName"/> (from the first when null).</summary>
    Task<KeysetPage<Subscription>> ListSubscriptionsAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken);

    /// <summary>
    /// Writes the changed subscription when its stored version is still <paramref name="expectedVersion"/>; the version
    /// goes up by one.
    /// </summary>
    Task<SubscriptionWrite> UpdateSubscriptionAsync(Subscription subscription, int expectedVersion, CancellationToken cancellationToken);

    /// <summary>Deletes the subscription; false when the tenant has none of that id.</summary>
    Task<bool> DeleteSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken);

    /// <summary>Every subscription of every tenant: what a node matches its commits' events against.</summary>
    [EngineOnly]
    Task<IReadOnlyList<Subscription>> GetAllSubscriptionsAsync(CancellationToken cancellationToken);
}

public enum SubscriptionWrite { Written, NotFound, Conflict, DuplicateName }
