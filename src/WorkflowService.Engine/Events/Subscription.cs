namespace WorkflowService.Engine.Events;

/// <summary>
/// A tenant's standing order for events: which events of which definitions are sent to which endpoint, signed with its
/// secret. While it is paused (by a caller, or because its receiver answered 410 Gone) its events are still recorded and
/// wait for it to be resumed.
/// </summary>
public sealed class Subscription
{
    public Guid Id { get; set; }
    /// <summary>The tenant it belongs to ("" is the default tenant); names are unique per tenant.</summary>
    public string Tenant { get; set; } = "";
    public required string Name { get; set; }
    /// <summary>The absolute URL events are posted to.</summary>
    public required string Endpoint { get; set; }
    /// <summary>Event types (<see cref="EventTypes"/>), or <see cref="EventTypes.All"/>.</summary>
    public IReadOnlyList<string> Events { get; set; } = [];
    /// <summary>The definitions whose instances it hears of; empty for every definition of its tenant.</summary>
    public IReadOnlyList<string> Definitions { get; set; } = [];
    /// <summary>
    /// The most events one request carries. 1 (the default): each event is posted alone, as a structured CloudEvent. More:
    /// the events due together are posted as one CloudEvents batch (a JSON array), each at most once per request.
    /// </summary>
    public int MaxEventsPerBatch { get; set; } = 1;
    public bool Enabled { get; set; } = true;
    /// <summary>Why it is paused, and by whom; null while it is enabled.</summary>
    public string? PausedReason { get; set; }
    /// <summary>The signing secret (<see cref="SigningSecret"/>).</summary>
    public required string Secret { get; set; }
    /// <summary>The secret before the last rotation, still signing until <see cref="PreviousSecretExpiresAt"/>.</summary>
    public string? PreviousSecret { get; set; }
    public DateTime? PreviousSecretExpiresAt { get; set; }
    public DateTime CreatedAt { get; set; }
    public DateTime UpdatedAt { get; set; }
    /// <summary>Counts its changes; a write checks it (another caller's change in between is not overwritten).</summary>
    public int Version { get; set; }

    /// <summary>Whether an event of <paramref name="type"/> from an instance of <paramref name="definition"/> is sent to it.</summary>
    public bool Matches(string type, string definition) =>
        (Definitions.Count == 0 || Definitions.Contains(definition, StringComparer.Ordinal))
        && (Events.Contains(EventTypes.All, StringComparer.Ordinal) || Events.Contains(type, StringComparer.Ordinal));

    /// <summary>The secrets that sign a delivery at <paramref name="now"/>: the current one, and the previous one during its overlap.</summary>
    public IEnumerable<string> SecretsAt(DateTime now)
    {
        yield return Secret;
        if (PreviousSecret is not null && PreviousSecretExpiresAt > now)
        {
            yield return PreviousSecret;
        }
    }
}
