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

    /// <summary>
    /// Whether endpoints may use plain http; unset means only in Development. Outside it, events carry business data and a
    /// signature an eavesdropper could replay within the receiver's tolerance, so https is the rule.
    /// </summary>
    public bool? AllowHttpEndpoints { get; set; }
}
