using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Events;

/// <summary>
/// This node's copy of every subscription, which its commits match their events against without a read. It is read
/// again every <see cref="EventOptions.SubscriptionRefreshInterval"/>, and at once after a change made on this node (by
/// <see cref="SubscriptionRegistry"/>): a
/// subscription made on another node takes effect here within that interval. Until the first read succeeds the node
/// records no events, so the first read is made before the node takes work.
/// </summary>
public sealed partial class SubscriptionDirectory(ISubscriptionStore store, IOptions<EventOptions> options, TimeProvider time,
    ILogger<SubscriptionDirectory> logger) : BackgroundService
{
    private static readonly IReadOnlyList<Subscription> None = [];

    private volatile Dictionary<string, IReadOnlyList<Subscription>> _byTenant = [];

    /// <summary>Whether no tenant has a subscription: then a commit records no event and pays nothing for the feature.</summary>
    public bool IsEmpty => _byTenant.Count == 0;

    /// <summary>The subscriptions of <paramref name="tenant"/>, paused ones included (their events wait for them).</summary>
    public IReadOnlyList<Subscription> Of(string tenant) => _byTenant.TryGetValue(tenant, out var subscriptions) ? subscriptions : None;

    /// <summary>One subscription by id, as of the last read; null when it is unknown here.</summary>
    public Subscription? Find(string tenant, Guid id) => Of(tenant).FirstOrDefault(s => s.Id == id);

    /// <summary>Reads every subscription again now.</summary>
    public async Task RefreshAsync(CancellationToken cancellationToken)
    {
        var all = await store.GetAllSubscriptionsAsync(cancellationToken).ConfigureAwait(false);
        _byTenant = all.GroupBy(s => s.Tenant, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => (IReadOnlyList<Subscription>)[.. g], StringComparer.Ordinal);
    }

    public override async Task StartAsync(CancellationToken cancellationToken)
    {
        try
        {
            await RefreshAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The store may still be starting: the loop reads again at its interval.
            LogRefreshFailed(logger, e);
        }

        await base.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(options.Value.SubscriptionRefreshInterval, time, stoppingToken).ConfigureAwait(false);
                await RefreshAsync(stoppingToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (!stoppingToken.IsCancellationRequested)
            {
                LogRefreshFailed(logger, e);
            }
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not read the event subscriptions; this node keeps the ones it read last")]
    private static partial void LogRefreshFailed(ILogger logger, Exception exception);
}
