namespace WorkflowService.Storage.Relational;

/// <summary>
/// A waiting delivery's row in wf_delivery_queue (schema 18): its place in its instance's order for its subscription, when
/// it is due, its attempts so far, and its lease. Written with the delivery's log row, deleted when the delivery is
/// delivered or dead-lettered; a replay writes it again.
/// </summary>
internal sealed class DeliveryQueueEntry
{
    /// <summary>The delivery's id, as in wf_deliveries: what a settlement names it by.</summary>
    public Guid Id { get; set; }
    public Guid SubscriptionId { get; set; }
    public Guid InstanceId { get; set; }
    /// <summary>The delivery's sequence in wf_deliveries.</summary>
    public long Sequence { get; set; }
    public long DueAtMs { get; set; }
    public int Attempts { get; set; }
    public string? LeaseOwner { get; set; }
    public long? LeaseToken { get; set; }
    public long? LeaseUntilMs { get; set; }
}
