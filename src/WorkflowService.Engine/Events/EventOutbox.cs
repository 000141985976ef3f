using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Events;

/// <summary>
/// Turns what a commit records into the deliveries it writes in the same transaction: one per event and subscription
/// that takes it. A commit of a tenant with no subscription gets none and costs one dictionary lookup.
/// <para>
/// Where the store can (<see cref="IDeliveryQueue.LeasesOnCommit"/>) and this node dispatches, each subscription's first
/// delivery of a commit is handed over: the commit writes it leased to this node when it is first of its instance for its
/// subscription and the subscription is enabled, and this node's dispatcher posts it from memory once the commit is
/// written. No claim reads it back; its settlement is its only other write.
/// </para>
/// </summary>
public sealed class EventOutbox(SubscriptionDirectory directory, DeliveryDoorbell doorbell, DeliveryHandOver handOver, IDeliveryQueue queue,
    NodeIdentity node, IOptions<EventOptions> options, EngineMetrics metrics, TimeProvider time)
{
    /// <summary>Whether no subscription exists anywhere: nothing to collect.</summary>
    public bool IsIdle => directory.IsEmpty;

    /// <summary>Adds to <paramref name="commit"/> the deliveries of its events, due at <paramref name="nowMs"/> (store clock).</summary>
    public void Collect(WaitPointCommit commit, long nowMs, string? traceParent)
    {
        ArgumentNullException.ThrowIfNull(commit);
        if (directory.IsEmpty || directory.Of(commit.Instance.Tenant) is not { Count: > 0 } subscriptions)
        {
            return;
        }

        foreach (var entry in commit.History)
        {
            if (TypeOf(entry) is { } type)
            {
                Add(commit, subscriptions, type, entry, null, nowMs, traceParent);
            }
            else if (entry.Type == HistoryEventTypes.EventEmitted && Emitted(entry) is var (custom, data))
            {
                Add(commit, subscriptions, custom, entry, data, nowMs, traceParent);
            }
        }

        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.Status == SignalStatus.DeadLettered)
            {
                var entry = new HistoryEvent
                {
                    InstanceId = commit.Instance.Id,
                    At = time.GetUtcNow().UtcDateTime,
                    Type = EventTypes.SignalDeadLettered,
                    StepId = commit.Instance.WaitStepId,
                    DataJson = JsonSerializer.Serialize(new { signalId = transition.SignalId, reason = transition.Error }, EngineJson.Options),
                };
                Add(commit, subscriptions, EventTypes.SignalDeadLettered, entry, null, nowMs, traceParent);
            }
        }

        if (commit.HasDeliveries && queue.LeasesOnCommit && options.Value.Dispatch && handOver.HasRoom)
        {
            LeaseFirstOfEachSubscription(commit.Deliveries, subscriptions, nowMs);
        }
    }

    /// <summary>
    /// Asks the store to write each subscription's first delivery of the commit leased to this node (the store writes it so
    /// only when no earlier delivery of the instance is pending for the subscription, and clears the lease otherwise). A
    /// later delivery of the same subscription waits for it, so it goes to the claim.
    /// </summary>
    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "A fencing value that tells this lease from a later claim, not a secret.")]
    private void LeaseFirstOfEachSubscription(List<EventDelivery> deliveries, IReadOnlyList<Subscription> subscriptions, long nowMs)
    {
        var until = nowMs + (long)options.Value.LeaseDuration.TotalMilliseconds;
        for (var i = 0; i < deliveries.Count; i++)
        {
            var delivery = deliveries[i];
            // A paused subscription's deliveries wait for its resume (a new instance's are written as asked: this node's view
            // of the subscriptions decides, as it decides which subscriptions get a delivery at all).
            if (!FirstOfItsSubscription(deliveries, i) || !IsEnabled(subscriptions, delivery.SubscriptionId))
            {
                continue;
            }

            delivery.LeaseOwner = node.Id;
            delivery.LeaseToken = Random.Shared.NextInt64(1, long.MaxValue);
            delivery.LeaseUntilMs = until;
            delivery.Attempts = 1;
        }
    }

    private static bool IsEnabled(IReadOnlyList<Subscription> subscriptions, Guid id)
    {
        foreach (var subscription in subscriptions)
        {
            if (subscription.Id == id)
            {
                return subscription.Enabled;
            }
        }

        return false;
    }

    private static bool FirstOfItsSubscription(List<EventDelivery> deliveries, int index)
    {
        for (var j = 0; j < index; j++)
        {
            if (deliveries[j].SubscriptionId == deliveries[index].SubscriptionId)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Whether any subscription of <paramref name="tenant"/> takes <paramref name="type"/> from <paramref name="definition"/>.</summary>
    public bool Takes(string tenant, string type, string definition) =>
        directory.Of(tenant).Any(s => s.Matches(type, definition));

    /// <summary>The deliveries of a task's claim by <paramref name="user"/>, written with the claim.</summary>
    public List<EventDelivery> ForTaskClaim(WorkflowInstance instance, HumanTask task, string user, long nowMs)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentNullException.ThrowIfNull(task);
        var commit = new WaitPointCommit { Instance = instance, ExpectedVersion = instance.Version };
        var entry = new HistoryEvent
        {
            InstanceId = instance.Id,
            At = time.GetUtcNow().UtcDateTime,
            Type = EventTypes.TaskClaimed,
            StepId = task.StepId,
            Actor = user,
            DataJson = JsonSerializer.Serialize(new { taskId = task.Id, task.Title, claimedBy = user }, EngineJson.Options),
        };
        Add(commit, directory.Of(instance.Tenant), EventTypes.TaskClaimed, entry, null, nowMs, null);
        return commit.HasDeliveries ? commit.Deliveries : [];
    }

    /// <summary>
    /// <paramref name="count"/> deliveries were written outside a wait point (a task's claim): counted, and this node's
    /// dispatcher takes them at once.
    /// </summary>
    public void Written(int count)
    {
        metrics.EventsWrittenToOutbox(count);
        doorbell.Ring();
    }

    /// <summary>
    /// A commit was written: its deliveries, if any, are counted; those it leased to this node go to the dispatcher's
    /// hand-over, and the claim looks at once for the others.
    /// </summary>
    public void Committed(WaitPointCommit commit)
    {
        if (commit is not { HasDeliveries: true })
        {
            return;
        }

        var forTheClaim = false;
        var claimableNow = false;
        foreach (var delivery in commit.Deliveries)
        {
            // One the hand-over has no room for keeps its lease until it runs out, then is claimed.
            if (delivery.LeaseOwner is null || !handOver.TryAdd(delivery))
            {
                forTheClaim = true;
                // Behind one this node is posting, it becomes claimable when that one is settled, which tells the claim then.
                claimableNow |= !handOver.IsInFlight(delivery);
            }
        }

        metrics.EventsWrittenToOutbox(commit.Deliveries.Count);
        if (forTheClaim)
        {
            handOver.TailsWritten();
        }

        if (claimableNow)
        {
            doorbell.Ring();
        }
    }

    /// <summary>The standard event a history entry stands for; null for the entries no event is sent for.</summary>
    public static string? TypeOf(HistoryEvent entry) => entry?.Type switch
    {
        HistoryEventTypes.InstanceStarted => EventTypes.InstanceStarted,
        HistoryEventTypes.InstanceCompleted => EventTypes.InstanceCompleted,
        HistoryEventTypes.InstanceFailed => EventTypes.InstanceFailed,
        HistoryEventTypes.InstanceFaulted => EventTypes.InstanceFaulted,
        HistoryEventTypes.InstanceCancelled => IsTermination(entry) ? EventTypes.InstanceTerminated : EventTypes.InstanceCancelled,
        HistoryEventTypes.InstanceSuspended => EventTypes.InstanceSuspended,
        HistoryEventTypes.InstanceResumed => EventTypes.InstanceResumed,
        HistoryEventTypes.InstanceMigrated => EventTypes.InstanceMigrated,
        HistoryEventTypes.TaskCreated => EventTypes.TaskCreated,
        HistoryEventTypes.TaskCompleted => EventTypes.TaskCompleted,
        _ => null,
    };

    /// <summary>An emit step's event: its type and data as the step recorded them.</summary>
    private static (string Type, JsonElement Data)? Emitted(HistoryEvent entry)
    {
        if (entry.DataJson is not { } json)
        {
            return null;
        }

        var emitted = JsonSerializer.Deserialize<JsonElement>(json);
        return emitted.TryGetProperty("type", out var type) && type.GetString() is { } name
            ? (name, emitted.TryGetProperty("data", out var data) ? data : default)
            : null;
    }

    private static bool IsTermination(HistoryEvent entry) =>
        entry.DataJson is { } data && data.Contains("\"terminated\":true", StringComparison.Ordinal);

    private void Add(WaitPointCommit commit, IReadOnlyList<Subscription> subscriptions, string type, HistoryEvent entry, JsonElement? custom,
        long nowMs, string? traceParent)
    {
        string? body = null;
        foreach (var subscription in subscriptions)
        {
            if (!subscription.Matches(type, commit.Instance.DefinitionName))
            {
                continue;
            }

            // One body per event, whatever the number of subscriptions: its CloudEvent id names the event, the delivery id each copy.
            body ??= CloudEventBody.Build(Guid.CreateVersion7(time.GetUtcNow()), type, commit.Instance, entry, traceParent, custom);
            commit.Deliveries.Add(new EventDelivery
            {
                Id = Guid.CreateVersion7(time.GetUtcNow()),
                SubscriptionId = subscription.Id,
                Tenant = commit.Instance.Tenant,
                InstanceId = commit.Instance.Id,
                Type = type,
                Body = body,
                // The store's clock, like its due time: its lag is measured against it on whichever node delivers it.
                CreatedAt = DateTime.UnixEpoch.AddMilliseconds(nowMs),
                DueAtMs = nowMs,
            });
        }
    }
}
