using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Events;

/// <summary>
/// Delivers the outbox on this node. What this node's commits leased to it (<see cref="DeliveryHandOver"/>) is posted from
/// memory; everything else is claimed with a lease. Both post concurrently and settle a batch in one write while the next
/// is posted. A commit on this node wakes the claim at once; the poll bounds the wait for what other nodes or time made due. A
/// failed attempt is retried after a capped, jittered exponential pause for <see cref="EventOptions.RetryPeriod"/>, then
/// dead-lettered; a 410 pauses the subscription. Each post is a span and is counted (docs/operations.md).
/// </summary>
public sealed partial class EventDispatcher(
    IDeliveryQueue queue,
    SubscriptionDirectory directory,
    SubscriptionRegistry registry,
    IEventSender sender,
    DeliveryDoorbell doorbell,
    DeliveryHandOver handOver,
    IStoreClock clock,
    NodeIdentity node,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<EventOptions> options,
    ILogger<EventDispatcher> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var settings = options.Value;
        if (!settings.Dispatch)
        {
            return;
        }

        await Task.WhenAll(ClaimLoopAsync(settings, stoppingToken), HandOverLoopAsync(settings, stoppingToken)).ConfigureAwait(false);
    }

    /// <summary>
    /// Claims what is due (written by other nodes, unleased, retried, or left by a node that stopped), posts it, and
    /// settles it while the next batch is claimed and posted: at most one settlement in flight.
    /// </summary>
    private async Task ClaimLoopAsync(EventOptions settings, CancellationToken stoppingToken)
    {
        var settling = Task.CompletedTask;
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                if (directory.IsEmpty)
                {
                    // No subscription anywhere, so no delivery to claim: the store is not asked until one is made (this
                    // node's registry rings at once; another node's is read within Events:SubscriptionRefreshInterval).
                    await doorbell.WaitAsync(settings.PollInterval, time, stoppingToken).ConfigureAwait(false);
                    continue;
                }

                var claimed = await queue.ClaimDueDeliveriesAsync(node.Id, settings.ClaimBatch, settings.LeaseDuration, stoppingToken).ConfigureAwait(false);
                if (claimed.Count == 0)
                {
                    if (!settling.IsCompleted)
                    {
                        // Its settlement may make the next delivery of an instance claimable: look again once it is written.
                        await settling.ConfigureAwait(false);
                        continue;
                    }

                    await WaitAsync(settings, stoppingToken).ConfigureAwait(false);
                    continue;
                }

                var settlements = await DeliverAsync(claimed, settings, stoppingToken).ConfigureAwait(false);
                await settling.ConfigureAwait(false);
                settling = queue.SettleDeliveriesAsync(settlements, stoppingToken);
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e) when (!stoppingToken.IsCancellationRequested)
            {
                // The store is away: the leases run out and the deliveries are claimed again, here or on another node.
                settling = Task.CompletedTask;
                LogDispatchFailed(logger, e);
                await Task.Delay(settings.PollInterval, time, stoppingToken).ConfigureAwait(false);
            }
        }

        await SettledAsync(settling).ConfigureAwait(false);
    }

    /// <summary>
    /// Posts the deliveries this node's commits leased to it (<see cref="DeliveryHandOver"/>), from memory, as they come.
    /// Their settlements are written as soon as no other is being written; while one is, the next are gathered and written
    /// together after it (commits hand over one or two at a time, and a round trip each cost more than the claim they
    /// spare). After a settlement, the claim looks at once when deliveries were written for it meanwhile: one of them may
    /// have waited for a delivery just settled.
    /// </summary>
    private async Task HandOverLoopAsync(EventOptions settings, CancellationToken stoppingToken)
    {
        var settling = Task.CompletedTask;
        Task? arrival = null;
        var gathered = new List<EventDelivery>();
        var settlements = new List<DeliverySettlement>();
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                List<EventDelivery> taken;
                if (settlements.Count == 0)
                {
                    taken = await handOver.TakeAsync(settings.ClaimBatch, stoppingToken).ConfigureAwait(false);
                }
                else
                {
                    if (!settling.IsCompleted)
                    {
                        // Gather until the settlement being written is done, posting what arrives meanwhile.
                        arrival ??= handOver.WaitToReadAsync(stoppingToken);
                        await Task.WhenAny(settling, arrival).ConfigureAwait(false);
                        arrival = arrival.IsCompleted ? null : arrival;
                    }

                    taken = handOver.TakeNow(settings.ClaimBatch);
                }

                if (taken.Count > 0)
                {
                    gathered.AddRange(taken);
                    settlements.AddRange(await DeliverAsync(taken, settings, stoppingToken).ConfigureAwait(false));
                }

                if (settlements.Count > 0 && (settling.IsCompleted || settlements.Count >= settings.ClaimBatch))
                {
                    await settling.ConfigureAwait(false);
                    settling = SettleHandedOverAsync([.. gathered], [.. settlements], stoppingToken);
                    gathered.Clear();
                    settlements.Clear();
                }
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e) when (!stoppingToken.IsCancellationRequested)
            {
                // As for a claim: the leases run out and the deliveries are claimed again.
                handOver.Settled(gathered);
                gathered.Clear();
                settlements.Clear();
                settling = Task.CompletedTask;
                LogDispatchFailed(logger, e);
                await Task.Delay(settings.PollInterval, time, stoppingToken).ConfigureAwait(false);
            }
        }

        await SettledAsync(settling).ConfigureAwait(false);
    }

    private async Task SettleHandedOverAsync(List<EventDelivery> taken, List<DeliverySettlement> settlements, CancellationToken stoppingToken)
    {
        try
        {
            await queue.SettleDeliveriesAsync(settlements, stoppingToken).ConfigureAwait(false);
        }
        finally
        {
            // Settled, or left to their leases: either way what waited behind them is the claim's now.
            handOver.Settled(taken);
            if (handOver.TakeTailsWritten())
            {
                doorbell.Ring();
            }
        }
    }

    /// <summary>The last settlement, awaited on the way out; one that fails leaves its leases to run out.</summary>
    private async Task SettledAsync(Task settling)
    {
        try
        {
            await settling.ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogDispatchFailed(logger, e);
        }
        catch (OperationCanceledException)
        {
            // Stopping: the leases are given back or run out.
        }
    }

    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        await base.StopAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await queue.ReleaseDeliveryLeasesAsync(node.Id, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The leases run out by themselves.
            LogReleaseFailed(logger, e);
        }
    }

    /// <summary>
    /// Posts every claimed delivery, at most <see cref="EventOptions.MaxConcurrentDeliveries"/> requests at once: each alone,
    /// or, to a subscription that takes batches, together with others of that subscription up to its batch size.
    /// </summary>
    private async Task<List<DeliverySettlement>> DeliverAsync(IReadOnlyList<EventDelivery> claimed, EventOptions settings, CancellationToken stoppingToken)
    {
        // The settlements in the order of the posts: a store writes each by its delivery's id, in any order.
        var posts = Posts(claimed, settings);
        var settled = new DeliverySettlement[posts.Count][];
        await Parallel.ForEachAsync(Enumerable.Range(0, posts.Count),
            new ParallelOptions { MaxDegreeOfParallelism = settings.MaxConcurrentDeliveries, CancellationToken = stoppingToken },
            async (p, ct) => settled[p] = await DeliverPostAsync(posts[p].Subscription, posts[p].Deliveries, settings, ct).ConfigureAwait(false))
            .ConfigureAwait(false);
        return [.. settled.SelectMany(s => s)];
    }

    /// <summary>
    /// The requests that carry <paramref name="claimed"/>, in claim order: one per delivery, except that first attempts to
    /// a subscription that takes batches fill a batch of it (up to its size, and to Events:MaxEventsPerBatch as it is now)
    /// before the next is begun. A retry goes alone, so that an event its receiver refuses fails alone. A claim holds at
    /// most one delivery per instance and subscription (the next waits for it), so a batch never reorders an instance's events.
    /// </summary>
    private List<(Subscription? Subscription, List<EventDelivery> Deliveries)> Posts(IReadOnlyList<EventDelivery> claimed, EventOptions settings)
    {
        var posts = new List<(Subscription? Subscription, List<EventDelivery> Deliveries)>(claimed.Count);
        Dictionary<Guid, List<EventDelivery>>? filling = null;
        foreach (var delivery in claimed)
        {
            var subscription = directory.Find(delivery.Tenant, delivery.SubscriptionId);
            if (subscription is not null && EventBatch.IsBatched(subscription) && delivery.Attempts <= 1)
            {
                filling ??= [];
                if (filling.TryGetValue(subscription.Id, out var batch)
                    && batch.Count < Math.Min(subscription.MaxEventsPerBatch, settings.MaxEventsPerBatch))
                {
                    batch.Add(delivery);
                    continue;
                }

                filling[subscription.Id] = batch = [delivery];
                posts.Add((subscription, batch));
                continue;
            }

            posts.Add((subscription, [delivery]));
        }

        return posts;
    }

    /// <summary>One request: its deliveries' settlements, in their order.</summary>
    private async Task<DeliverySettlement[]> DeliverPostAsync(Subscription? subscription, List<EventDelivery> deliveries, EventOptions settings,
        CancellationToken stoppingToken)
    {
        if (subscription is null)
        {
            // Deleted (its deliveries go with it) or not read here yet: try again at the next poll.
            return [.. deliveries.Select(d => new DeliverySettlement(d.Id, d.LeaseToken ?? 0, DeliveryStatus.Pending,
                clock.NowMs() + (long)settings.PollInterval.TotalMilliseconds, null, "the subscription is not known on this node yet", null, null))];
        }

        // The spans and the instruments measure the post alone (one span per event, each in its commit's trace, none the
        // parent of another); what to do next is decided afterwards. The HTTP client's span is the first event's child.
        var spans = new System.Diagnostics.Activity?[deliveries.Count];
        var outside = System.Diagnostics.Activity.Current;
        try
        {
            for (var k = 0; k < deliveries.Count; k++)
            {
                spans[k] = EngineTelemetry.StartDelivery(deliveries[k], node.Id, deliveries.Count);
                System.Diagnostics.Activity.Current = outside;
            }

            System.Diagnostics.Activity.Current = spans[0] ?? outside;
            var posting = time.GetTimestamp();
            var attempt = await PostAsync(subscription, deliveries, settings, stoppingToken).ConfigureAwait(false);
            var elapsed = time.GetElapsedTime(posting);
            if (attempt.Gone)
            {
                await PauseGoneAsync(subscription, stoppingToken).ConfigureAwait(false);
            }

            // The store's clock, read once: like the delivery's creation, its lag is comparable across nodes.
            var now = clock.Now();
            var settlements = new DeliverySettlement[deliveries.Count];
            for (var k = 0; k < deliveries.Count; k++)
            {
                var (settlement, outcome) = Settle(deliveries[k], attempt, now, settings);
                settlements[k] = settlement;
                metrics.DeliveryAttempted(outcome, k == 0 ? elapsed.TotalMilliseconds : null, settlement.LatencyMs);
                EngineTelemetry.Delivered(spans[k], attempt.Status, outcome, attempt.Error);
            }

            return settlements;
        }
        finally
        {
            foreach (var span in spans)
            {
                span?.Dispose();
            }
        }
    }

    /// <summary>One post, bounded by <see cref="EventOptions.AttemptTimeout"/>.</summary>
    private async Task<DeliveryAttempt> PostAsync(Subscription subscription, IReadOnlyList<EventDelivery> deliveries, EventOptions settings,
        CancellationToken stoppingToken)
    {
        using var attemptTimeout = new CancellationTokenSource(settings.AttemptTimeout, time);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken, attemptTimeout.Token);
        try
        {
            return await sender.SendAsync(subscription, deliveries, linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (attemptTimeout.IsCancellationRequested && !stoppingToken.IsCancellationRequested)
        {
            return new DeliveryAttempt(null, $"no answer within {settings.AttemptTimeout.TotalSeconds:0.###} s");
        }
    }

    /// <summary>
    /// What the attempt makes of the delivery: delivered, pending again (a retry, or a 410's pause, which the caller has
    /// made), or dead-lettered.
    /// </summary>
    private static (DeliverySettlement Settlement, string Outcome) Settle(EventDelivery delivery, DeliveryAttempt attempt, StoreInstant now,
        EventOptions settings)
    {
        var token = delivery.LeaseToken ?? 0;
        if (attempt.Succeeded)
        {
            return (new DeliverySettlement(delivery.Id, token, DeliveryStatus.Delivered, null, attempt.Status, null, now.UtcDateTime,
                Math.Max(0, now.UnixMs - new StoreInstant(delivery.CreatedAt).UnixMs)), DeliveryOutcomes.Success);
        }

        if (attempt.Gone)
        {
            // Not an attempt against its period: it waits, pending, for the subscription to be resumed.
            return (new DeliverySettlement(delivery.Id, token, DeliveryStatus.Pending, now.UnixMs, attempt.Status, attempt.Error, null, null),
                DeliveryOutcomes.Gone);
        }

        var retryAt = now.UnixMs + (long)RetryDelay(delivery.Attempts, settings).TotalMilliseconds;
        var periodEnds = new DateTimeOffset(delivery.CreatedAt + settings.RetryPeriod).ToUnixTimeMilliseconds();
        return delivery.Attempts >= settings.MaxAttempts || retryAt > periodEnds
            ? (new DeliverySettlement(delivery.Id, token, DeliveryStatus.DeadLettered, null, attempt.Status, attempt.Error, null, null),
                DeliveryOutcomes.DeadLettered)
            : (new DeliverySettlement(delivery.Id, token, DeliveryStatus.Pending, retryAt, attempt.Status, attempt.Error, null, null),
                DeliveryOutcomes.Retry);
    }

    /// <summary>The pause after attempt <paramref name="attempts"/>: doubling from the first, capped, with up to a fifth of jitter either way.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "Jitter spreads retries; it guards nothing.")]
    public static TimeSpan RetryDelay(int attempts, EventOptions settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var exponent = Math.Clamp(attempts - 1, 0, 30);
        var delay = Math.Min(settings.FirstRetryDelay.TotalMilliseconds * Math.Pow(2, exponent), settings.MaxRetryDelay.TotalMilliseconds);
        return TimeSpan.FromMilliseconds(delay * (0.8 + (0.4 * Random.Shared.NextDouble())));
    }

    private async Task PauseGoneAsync(Subscription subscription, CancellationToken cancellationToken)
    {
        if (subscription.Enabled)
        {
            LogGone(logger, subscription.Name, subscription.Tenant);
            await registry.PauseAsync(subscription.Tenant, subscription.Id, "the receiver answered 410 Gone", cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task WaitAsync(EventOptions settings, CancellationToken stoppingToken)
    {
        if (doorbell.TryTakeRing())
        {
            // Deliveries were written here while the claim ran: look again at once, as the wait below would. Under load
            // this spares most reads of the next due time, which read up to a hundred waiting deliveries each.
            return;
        }

        var next = await queue.GetNextDeliveryDueAsync(stoppingToken).ConfigureAwait(false);
        var wait = settings.PollInterval;
        if (next is { } due)
        {
            var until = TimeSpan.FromMilliseconds(Math.Max(0, due - clock.NowMs()));
            wait = until < wait ? until : wait;
        }

        if (wait <= TimeSpan.Zero)
        {
            return;
        }

        await doorbell.WaitAsync(wait, time, stoppingToken).ConfigureAwait(false);
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Event dispatch failed; its claims run out and are taken again")]
    private static partial void LogDispatchFailed(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not give back this node's delivery leases; they run out by themselves")]
    private static partial void LogReleaseFailed(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Warning, Message = "The receiver of subscription {Name} (tenant '{Tenant}') answered 410 Gone: the subscription is paused")]
    private static partial void LogGone(ILogger logger, string name, string tenant);
}
