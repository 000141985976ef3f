namespace WorkflowService.Engine.Events;

public enum DeliveryStatus
{
    /// <summary>Waiting for its turn (its due time, and every earlier event of its instance to its subscription).</summary>
    Pending,
    /// <summary>The receiver answered 2xx.</summary>
    Delivered,
    /// <summary>Every attempt of its retry period failed; a replay makes it pending again.</summary>
    DeadLettered,
}

/// <summary>
/// One event on its way to one subscription: written in the transaction of the commit that caused it (the outbox), then
/// claimed by a node's dispatcher with a lease, posted, and settled. Its id is the <c>webhook-id</c> and the CloudEvent's
/// id, the same on every attempt, which receivers deduplicate on.
/// </summary>
public sealed class EventDelivery
{
    public Guid Id { get; set; }
    /// <summary>Its place in the store's order, given when it is written: within an instance and a subscription, commit order.</summary>
    public long Sequence { get; set; }
    public Guid SubscriptionId { get; set; }
    public string Tenant { get; set; } = "";
    public Guid InstanceId { get; set; }
    public required string Type { get; set; }
    /// <summary>The CloudEvent, in structured JSON: what is posted.</summary>
    public required string Body { get; set; }
    /// <summary>When its commit wrote it, by the store's clock.</summary>
    public DateTime CreatedAt { get; set; }
    /// <summary>When it may be tried (next), Unix ms on the store's clock.</summary>
    public long DueAtMs { get; set; }
    public DeliveryStatus Status { get; set; }
    public int Attempts { get; set; }
    public string? LeaseOwner { get; set; }
    public long? LeaseToken { get; set; }
    public long? LeaseUntilMs { get; set; }
    /// <summary>The receiver's last HTTP status; null when the last attempt got no answer.</summary>
    public int? LastStatus { get; set; }
    public string? LastError { get; set; }
    public DateTime? DeliveredAt { get; set; }
    /// <summary>From its commit to the receiver's 2xx, in milliseconds, by the store's clock.</summary>
    public long? LatencyMs { get; set; }
}
