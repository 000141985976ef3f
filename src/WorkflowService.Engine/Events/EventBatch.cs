using System.Security.Cryptography;
using System.Text;

namespace WorkflowService.Engine.Events;

/// <summary>
/// How deliveries travel in one request to a subscription that takes batches: the CloudEvents HTTP binding's batched
/// content mode, a JSON array of structured events in the order they were claimed (at most one per instance: an
/// instance's next event waits for its previous one to be settled). Its <c>webhook-id</c> is derived from the deliveries'
/// ids, so the same deliveries carry the same id and other deliveries another; a failed delivery is retried alone, so
/// receivers deduplicate on each event's <c>id</c> (unique within a subscription), not on the batch's.
/// </summary>
public static class EventBatch
{
    public const string MediaType = "application/cloudevents-batch+json";

    /// <summary>Whether deliveries to <paramref name="subscription"/> go as batches (even a batch of one).</summary>
    public static bool IsBatched(Subscription subscription) => subscription is { MaxEventsPerBatch: > 1 };

    /// <summary>The request's body: the events' structured bodies, in order, in a JSON array.</summary>
    public static string Body(IReadOnlyList<EventDelivery> deliveries)
    {
        ArgumentNullException.ThrowIfNull(deliveries);
        var body = new StringBuilder(2 + deliveries.Sum(d => d.Body.Length + 1));
        body.Append('[');
        for (var i = 0; i < deliveries.Count; i++)
        {
            body.Append(i == 0 ? "" : ",").Append(deliveries[i].Body);
        }

        return body.Append(']').ToString();
    }

    /// <summary>The request's <c>webhook-id</c>: "batch_" and a hash of the deliveries' ids in order.</summary>
    public static string IdOf(IReadOnlyList<EventDelivery> deliveries)
    {
        ArgumentNullException.ThrowIfNull(deliveries);
        Span<byte> ids = deliveries.Count <= 64 ? stackalloc byte[deliveries.Count * 16] : new byte[deliveries.Count * 16];
        for (var i = 0; i < deliveries.Count; i++)
        {
            deliveries[i].Id.TryWriteBytes(ids.Slice(i * 16, 16), bigEndian: true, out _);
        }

        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(ids, hash);
        return "batch_" + Convert.ToHexStringLower(hash[..16]);
    }
}
