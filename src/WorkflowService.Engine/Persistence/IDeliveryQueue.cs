using WorkflowService.Engine.Events;

namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The outbox's deliveries after their commit wrote them: claimed by a node's dispatcher with a lease, then settled. A
/// delivery is claimable when it is pending and due, its subscription is enabled, and no earlier delivery of its instance
/// to its subscription is still pending: each receiver hears of an instance in commit order.
/// </summary>
public interface IDeliveryQueue
{
    /// <summary>
    /// Whether a commit can write a delivery already leased to the committing node (its <see cref="EventDelivery.LeaseOwner"/>,
    /// token and lease set). A new instance's are written as asked (it has no earlier delivery, and the engine asks only for
    /// enabled subscriptions). Otherwise the store writes it so only when no earlier delivery of its instance is pending for
    /// its subscription and the subscription is enabled, and else writes it unleased and clears those fields. A store that
    /// cannot returns false, and every delivery is claimed.
    /// </summary>
    bool LeasesOnCommit => false;

    /// <summary>Leases up to <paramref name="max"/> claimable deliveries to <paramref name="owner"/> (attempts incremented).</summary>
    [EngineOnly]
    Task<IReadOnlyList<EventDelivery>> ClaimDueDeliveriesAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken);

    /// <summary>Writes the outcome of each attempt whose lease still holds; returns how many did.</summary>
    [EngineOnly]
    Task<int> SettleDeliveriesAsync(IReadOnlyList<DeliverySettlement> settlements, CancellationToken cancellationToken);

    /// <summary>
    /// When the next claimable delivery becomes due (Unix ms, store clock): the earliest of the pending deliveries that are
    /// first of their instance for their subscription (a later one waits for it, whatever its own due time). Null when none is pending.
    /// </summary>
    [EngineOnly]
    Task<long?> GetNextDeliveryDueAsync(CancellationToken cancellationToken);

    /// <summary>How many deliveries are pending, across tenants (the backlog gauge; bounded by its caller's interval).</summary>
    [EngineOnly]
    Task<long> CountPendingDeliveriesAsync(CancellationToken cancellationToken);

    /// <summary>A subscription's deliveries, newest first, after <paramref name="beforeSequence"/> when given.</summary>
    Task<KeysetPage<EventDelivery>> ListDeliveriesAsync(string tenant, Guid subscriptionId, DeliveryStatus? status, long? beforeSequence, int limit,
        CancellationToken cancellationToken);

    /// <summary>Makes a dead-lettered delivery pending again, due now, with a fresh set of attempts; false when there is none such.</summary>
    Task<bool> ReplayDeliveryAsync(string tenant, Guid subscriptionId, Guid deliveryId, CancellationToken cancellationToken);

    /// <summary>Gives back every lease <paramref name="owner"/> holds (graceful shutdown).</summary>
    [EngineOnly]
    Task<int> ReleaseDeliveryLeasesAsync(string owner, CancellationToken cancellationToken);
}

/// <summary>How one attempt ended.</summary>
/// <param name="Status">Delivered; Pending again (a retry at <paramref name="RetryAtMs"/>); or DeadLettered.</param>
/// <param name="HttpStatus">The receiver's status code; null when it did not answer.</param>
public sealed record DeliverySettlement(Guid Id, long LeaseToken, DeliveryStatus Status, long? RetryAtMs, int? HttpStatus, string? Error,
    DateTime? DeliveredAt, long? LatencyMs);
