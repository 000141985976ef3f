using System.ComponentModel;
using WorkflowService.Engine.Events;

namespace WorkflowService.Api;

/// <summary>A subscription as a caller writes it.</summary>
public sealed record SubscriptionRequest(
    [property: Description("Its name, unique in the tenant.")] string Name,
    [property: Description("The https URL events are posted to.")] string Endpoint,
    [property: Description("Event types: instance.started, instance.completed, ..., a custom event's type, or * for every event.")]
    IReadOnlyList<string> Events,
    [property: Description("The definitions whose instances it hears of; empty or absent for every definition.")]
    IReadOnlyList<string>? Definitions = null,
    [property: Description("Whether it starts active (the default) or paused. Ignored on a change: pause and resume do that.")]
    bool? Enabled = null,
    [property: Description("The most events one request carries, 1 to Events:MaxEventsPerBatch (100 unless configured): 1 (the default) "
        + "posts each event alone as application/cloudevents+json; more posts the events due together as one "
        + "application/cloudevents-batch+json array (docs/events.md). Absent on a change: 1.")]
    int? MaxEventsPerBatch = null)
{
    internal SubscriptionSpec Spec => new(Name, Endpoint, Events, Definitions, MaxEventsPerBatch);
}

/// <summary>A subscription; its secrets are shown only when made (on creation and rotation).</summary>
public sealed record SubscriptionView(
    Guid Id,
    string Name,
    string Endpoint,
    IReadOnlyList<string> Events,
    IReadOnlyList<string> Definitions,
    [property: Description("The most events one request carries (1: each event alone).")] int MaxEventsPerBatch,
    [property: Description("active, or paused (see pausedReason)")] string Status,
    string? PausedReason,
    [property: Description("Until when the secret before the last rotation still signs; null when only the current one does.")]
    DateTime? PreviousSecretExpiresAt,
    DateTime CreatedAt,
    DateTime UpdatedAt,
    int Version)
{
    public const string Active = "active";
    public const string Paused = "paused";

    internal static SubscriptionView From(Subscription s, DateTime now) => new(
        s.Id, s.Name, s.Endpoint, s.Events, s.Definitions, s.MaxEventsPerBatch, s.Enabled ? Active : Paused, s.PausedReason,
        s.PreviousSecretExpiresAt > now ? s.PreviousSecretExpiresAt : null, s.CreatedAt, s.UpdatedAt, s.Version);
}

/// <summary>A subscription with the secret that signs its deliveries: shown once, keep it where the receiver reads it.</summary>
public sealed record SubscriptionWithSecretView(
    SubscriptionView Subscription,
    [property: Description("The signing secret (whsec_ and base64): the receiver verifies webhook-signature with it.")] string Secret);

/// <summary>The body of a secret rotation.</summary>
public sealed record RotateSecretRequest(
    [property: Description("How long the previous secret still signs, in seconds (default Events:SecretOverlap).")] long? OverlapSeconds = null);

/// <summary>The body of a pause.</summary>
public sealed record PauseSubscriptionRequest([property: Description("Why, kept with the subscription.")] string? Reason = null);

/// <summary>One event on its way to a subscription: what it is, and how its attempts went.</summary>
public sealed record DeliveryView(
    [property: Description("The delivery's id: the webhook-id header, the same on every attempt.")] Guid Id,
    string Type,
    Guid InstanceId,
    [property: Description("Pending (waiting for its turn or a retry), Delivered, or DeadLettered (replay it to try again).")] DeliveryStatus Status,
    int Attempts,
    [property: Description("The receiver's HTTP status at the last attempt; null when it did not answer or no attempt was made.")] int? LastStatus,
    string? LastError,
    DateTime CreatedAt,
    [property: Description("When the next attempt is due, while it is pending.")] DateTime? NextAttemptAt,
    DateTime? DeliveredAt,
    [property: Description("From the commit to the receiver's 2xx, in milliseconds.")] long? LatencyMs,
    [property: Description("The CloudEvent as it is posted.")] System.Text.Json.JsonElement Event)
{
    internal static DeliveryView From(EventDelivery d) => new(
        d.Id, d.Type, d.InstanceId, d.Status, d.Attempts, d.LastStatus, d.LastError, d.CreatedAt,
        d.Status == DeliveryStatus.Pending ? DateTimeOffset.FromUnixTimeMilliseconds(d.DueAtMs).UtcDateTime : null,
        d.DeliveredAt, d.LatencyMs, Json.Element(d.Body)!.Value);
}

/// <summary>A replayed delivery: pending again, due now.</summary>
public sealed record ReplayedDeliveryView(Guid Id, DeliveryStatus Status);
