using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Events;

/// <summary>Events sent to subscriptions ("Events" section): how many subscriptions a tenant may hold and how secrets rotate.</summary>
public sealed class EventOptions
{
    public const string Section = "Events";

    /// <summary>Subscriptions one tenant may hold (default 50): each adds a delivery to every commit whose events it takes.</summary>
    [Range(1, 1_000)]
    public int MaxSubscriptionsPerTenant { get; set; } = 50;

    /// <summary>Definitions one subscription may name (default 100).</summary>
    [Range(1, 1_000)]
    public int MaxDefinitionsPerSubscription { get; set; } = 100;

    /// <summary>How long the previous secret still signs after a rotation when the caller names no period (default 24 hours).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "30.00:00:00")]
    public TimeSpan SecretOverlap { get; set; } = TimeSpan.FromHours(24);

    /// <summary>The longest overlap a caller may ask for on a rotation (default 30 days).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "365.00:00:00")]
    public TimeSpan MaxSecretOverlap { get; set; } = TimeSpan.FromDays(30);

    /// <summary>
    /// How often a node reads the subscriptions again (default 1 second): a subscription made or changed on another node
    /// takes effect on this one within it. A change made on this node takes effect here at once.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:05:00")]
    public TimeSpan SubscriptionRefreshInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Whether this node delivers events (default true; a node that only serves the API may set false).</summary>
    public bool Dispatch { get; set; } = true;

    /// <summary>Deliveries one claim takes (default 100).</summary>
    [Range(1, 1_000)]
    public int ClaimBatch { get; set; } = 100;

    /// <summary>
    /// Deliveries this node's commits may hand to its dispatcher at once, written leased to this node and posted from
    /// memory without a claim (default 0: off, every delivery claimed). On PostgreSQL it lowers commit-to-receiver p50
    /// from about 1.4 to 0.5 ms, and costs about a tenth of the throughput at saturation with a subscription to every
    /// event (docs/benchmarks/handover-2026-11-28.md). Beyond it, a commit's deliveries wait for the claim.
    /// </summary>
    [Range(0, 100_000)]
    public int HandOverCapacity { get; set; }

    /// <summary>The largest batch a subscription may ask for in its maxEventsPerBatch (default 100).</summary>
    [Range(1, 1_000)]
    public int MaxEventsPerBatch { get; set; } = 100;

    /// <summary>Deliveries posted at once by this node (default 32).</summary>
    [Range(1, 1_000)]
    public int MaxConcurrentDeliveries { get; set; } = 32;

    /// <summary>How long a claim holds a delivery; a dead node's deliveries are taken over after it (default 30 s).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan LeaseDuration { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The longest one attempt waits for the receiver's answer (default 10 s); must be shorter than the lease.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:05:00")]
    public TimeSpan AttemptTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The safety-net poll for deliveries made due by other nodes or by time (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:10:00")]
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The pause before the first retry (default 1 s); each retry doubles it, up to <see cref="MaxRetryDelay"/>, with jitter.</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan FirstRetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest pause between two attempts (default 10 minutes).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "1.00:00:00")]
    public TimeSpan MaxRetryDelay { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>How long after its commit a delivery is still retried (default 24 hours); then it is dead-lettered.</summary>
    [Range(typeof(TimeSpan), "00:00:01", "30.00:00:00")]
    public TimeSpan RetryPeriod { get; set; } = TimeSpan.FromHours(24);

    /// <summary>The most attempts of one delivery (default 100); then it is dead-lettered, whatever is left of its period.</summary>
    [Range(1, 10_000)]
    public int MaxAttempts { get; set; } = 100;

    /// <summary>
    /// Whether endpoints may use plain http; unset means only in Development. Outside it, events carry business data and a
    /// signature an eavesdropper could replay within the receiver's tolerance, so https is the rule.
    /// </summary>
    public bool? AllowHttpEndpoints { get; set; }
}
