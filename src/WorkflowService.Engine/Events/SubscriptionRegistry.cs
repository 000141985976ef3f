using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Events;

/// <summary>The outcome of a change to a subscription: the subscription as written, or why nothing was.</summary>
public sealed record SubscriptionChange(Subscription? Subscription, SubscriptionChangeOutcome Outcome, IReadOnlyList<Diagnostic> Problems)
{
    public static SubscriptionChange Of(Subscription subscription) => new(subscription, SubscriptionChangeOutcome.Done, []);
    public static SubscriptionChange Failed(SubscriptionChangeOutcome outcome) => new(null, outcome, []);
}

public enum SubscriptionChangeOutcome { Done, Invalid, NotFound, DuplicateName, TooMany, Conflict }

/// <summary>
/// Creating, changing, pausing, resuming, rotating and deleting subscriptions, each within one tenant. A change that
/// races another caller's is read again and applied again, a bounded number of times.
/// </summary>
public sealed class SubscriptionRegistry(ISubscriptionStore store, SubscriptionDirectory directory, IEventSender sender, TimeProvider time,
    IOptions<EventOptions> options, IHostEnvironment environment)
{
    /// <summary>How often a change that keeps losing races is tried before the caller hears of a conflict.</summary>
    private const int MaxAttempts = 5;

    /// <summary>Whether endpoints may use plain http (unset: only in Development).</summary>
    public bool AllowsHttp => options.Value.AllowHttpEndpoints ?? environment.IsDevelopment();

    /// <summary>What is wrong with <paramref name="spec"/>, the egress rules' refusal of its endpoint included; empty when it may be written.</summary>
    public IReadOnlyList<Diagnostic> Check(SubscriptionSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        var problems = spec.Problems(AllowsHttp, options.Value.MaxDefinitionsPerSubscription, options.Value.MaxEventsPerBatch);
        if (!problems.Exists(p => p.Path == "$.endpoint") && Uri.TryCreate(spec.Endpoint, UriKind.Absolute, out var endpoint)
            && sender.RefusalOf(endpoint) is { } refusal)
        {
            problems.Add(new Diagnostic("$.endpoint", refusal));
        }

        return problems;
    }

    public async Task<SubscriptionChange> CreateAsync(string tenant, SubscriptionSpec spec, bool enabled, CancellationToken cancellationToken)
    {
        if (Check(spec) is { Count: > 0 } problems)
        {
            return new SubscriptionChange(null, SubscriptionChangeOutcome.Invalid, problems);
        }

        var existing = await store.ListSubscriptionsAsync(tenant, null, 1, cancellationToken).ConfigureAwait(false);
        if (existing.Total >= options.Value.MaxSubscriptionsPerTenant)
        {
            return SubscriptionChange.Failed(SubscriptionChangeOutcome.TooMany);
        }

        var now = time.GetUtcNow().UtcDateTime;
        var subscription = new Subscription
        {
            Id = Guid.CreateVersion7(time.GetUtcNow()),
            Tenant = tenant,
            Name = spec.Name!,
            Endpoint = spec.Endpoint!,
            Events = [.. spec.Events!.Distinct(StringComparer.Ordinal)],
            Definitions = [.. (spec.Definitions ?? []).Distinct(StringComparer.Ordinal)],
            MaxEventsPerBatch = spec.MaxEventsPerBatch ?? 1,
            Enabled = enabled,
            PausedReason = enabled ? null : "created paused",
            Secret = SigningSecret.Create(),
            CreatedAt = now,
            UpdatedAt = now,
            Version = 1,
        };
        if (!await store.CreateSubscriptionAsync(subscription, cancellationToken).ConfigureAwait(false))
        {
            return SubscriptionChange.Failed(SubscriptionChangeOutcome.DuplicateName);
        }

        await directory.RefreshAsync(cancellationToken).ConfigureAwait(false);
        return SubscriptionChange.Of(subscription);
    }

    /// <summary>Replaces what the caller may set (name, endpoint, events, definitions, batch size); state and secrets stay.</summary>
    public Task<SubscriptionChange> ReplaceAsync(string tenant, Guid id, SubscriptionSpec spec, CancellationToken cancellationToken)
    {
        if (Check(spec) is { Count: > 0 } problems)
        {
            return Task.FromResult(new SubscriptionChange(null, SubscriptionChangeOutcome.Invalid, problems));
        }

        return ChangeAsync(tenant, id, s =>
        {
            s.Name = spec.Name!;
            s.Endpoint = spec.Endpoint!;
            s.Events = [.. spec.Events!.Distinct(StringComparer.Ordinal)];
            s.Definitions = [.. (spec.Definitions ?? []).Distinct(StringComparer.Ordinal)];
            s.MaxEventsPerBatch = spec.MaxEventsPerBatch ?? 1;
        }, cancellationToken);
    }

    /// <summary>Pauses the subscription with <paramref name="reason"/>; its events wait until it is resumed.</summary>
    public Task<SubscriptionChange> PauseAsync(string tenant, Guid id, string reason, CancellationToken cancellationToken) =>
        ChangeAsync(tenant, id, s =>
        {
            s.Enabled = false;
            s.PausedReason = reason;
        }, cancellationToken);

    public Task<SubscriptionChange> ResumeAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        ChangeAsync(tenant, id, s =>
        {
            s.Enabled = true;
            s.PausedReason = null;
        }, cancellationToken);

    /// <summary>
    /// A new secret signs from now on; the one it replaces still signs for <paramref name="overlap"/> (the configured
    /// default when null), so that receivers can change over without refusing a delivery.
    /// </summary>
    public Task<SubscriptionChange> RotateSecretAsync(string tenant, Guid id, TimeSpan? overlap, CancellationToken cancellationToken)
    {
        var period = overlap ?? options.Value.SecretOverlap;
        if (period < TimeSpan.Zero || period > options.Value.MaxSecretOverlap)
        {
            return Task.FromResult(new SubscriptionChange(null, SubscriptionChangeOutcome.Invalid,
                [new Diagnostic("$.overlapSeconds", $"an overlap of 0 to {(long)options.Value.MaxSecretOverlap.TotalSeconds} seconds is expected")]));
        }

        return ChangeAsync(tenant, id, s =>
        {
            s.PreviousSecret = s.Secret;
            s.PreviousSecretExpiresAt = time.GetUtcNow().UtcDateTime + period;
            s.Secret = SigningSecret.Create();
        }, cancellationToken);
    }

    public async Task<bool> DeleteAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        var deleted = await store.DeleteSubscriptionAsync(tenant, id, cancellationToken).ConfigureAwait(false);
        await directory.RefreshAsync(cancellationToken).ConfigureAwait(false);
        return deleted;
    }

    private async Task<SubscriptionChange> ChangeAsync(string tenant, Guid id, Action<Subscription> change, CancellationToken cancellationToken)
    {
        for (var attempt = 1; ; attempt++)
        {
            if (await store.GetSubscriptionAsync(tenant, id, cancellationToken).ConfigureAwait(false) is not { } subscription)
            {
                return SubscriptionChange.Failed(SubscriptionChangeOutcome.NotFound);
            }

            var expected = subscription.Version;
            change(subscription);
            subscription.UpdatedAt = time.GetUtcNow().UtcDateTime;
            subscription.Version = expected + 1;
            switch (await store.UpdateSubscriptionAsync(subscription, expected, cancellationToken).ConfigureAwait(false))
            {
                case SubscriptionWrite.Written:
                    // This node sends by the change from now on; the others within Events:SubscriptionRefreshInterval.
                    await directory.RefreshAsync(cancellationToken).ConfigureAwait(false);
                    return SubscriptionChange.Of(subscription);
                case SubscriptionWrite.NotFound:
                    return SubscriptionChange.Failed(SubscriptionChangeOutcome.NotFound);
                case SubscriptionWrite.DuplicateName:
                    return SubscriptionChange.Failed(SubscriptionChangeOutcome.DuplicateName);
                case SubscriptionWrite.Conflict when attempt >= MaxAttempts:
                    return SubscriptionChange.Failed(SubscriptionChangeOutcome.Conflict);
            }
        }
    }
}
