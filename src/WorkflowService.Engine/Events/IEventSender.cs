namespace WorkflowService.Engine.Events;

/// <summary>Posts deliveries to their subscription's endpoint, signed (the host's HTTP client; the engine holds no HTTP).</summary>
public interface IEventSender
{
    /// <summary>
    /// One attempt, one request: the receiver's status, or why there was none. Never throws for the receiver's failures.
    /// <paramref name="deliveries"/> holds one delivery, or for a subscription that takes batches
    /// (<see cref="Subscription.MaxEventsPerBatch"/> above 1) up to that many, posted together (<see cref="EventBatch"/>).
    /// </summary>
    Task<DeliveryAttempt> SendAsync(Subscription subscription, IReadOnlyList<EventDelivery> deliveries, CancellationToken cancellationToken);

    /// <summary>
    /// Why deliveries to <paramref name="endpoint"/> would be refused by the egress rules, as far as the URL alone tells (its
    /// host, port, or an address written in it); null when it may be tried. A name's addresses are checked at each delivery.
    /// </summary>
    string? RefusalOf(Uri endpoint);
}

/// <summary>How one attempt went: the receiver's HTTP status (null when it did not answer) and what went wrong, if anything.</summary>
public readonly record struct DeliveryAttempt(int? Status, string? Error)
{
    public bool Succeeded => Status is >= 200 and < 300;

    /// <summary>410 Gone: the receiver says the endpoint is no more, so its subscription is paused.</summary>
    public bool Gone => Status == 410;
}
