using System.Net;
using System.Net.Http.Json;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>The outbox's queue on every store: what a claim takes, and when the dispatcher is told to look again.</summary>
public abstract class DeliveryQueueContractTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // The test claims and settles by hand: no dispatcher takes the deliveries first.
    protected override Dictionary<string, string?> Settings => new() { ["Events:Dispatch"] = "false" };

    private static readonly string[] EveryEvent = ["*"];

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_later_event_waits_behind_its_instances_earlier_one_and_the_next_due_time_is_the_earlier_ones_retry()
    {
        var name = Definitions.Unique("queue");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        using (var created = await Api.Http.PostAsJsonAsync("/subscriptions",
            new { name = Definitions.Unique("hooks"), endpoint = "https://receiver.example.com/hooks", events = EveryEvent, definitions = new[] { name } },
            WorkflowServiceFactory.Json, Token))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        await Api.WaitForAsync(started.Id, Engine.Persistence.InstanceStatus.Completed);
        var queue = Factory.Get<IDeliveryQueue>();
        var clock = Factory.Get<IStoreClock>();

        // Both events are due; only the instance's first may go.
        var first = Assert.Single(await queue.ClaimDueDeliveriesAsync("node-a", 10, TimeSpan.FromMinutes(5), Token));
        Assert.Equal(EventTypes.InstanceStarted, first.Type);

        // Its attempt failed: it is retried in a minute, and the completion behind it must wait that long too.
        var retryAt = clock.NowMs() + 60_000;
        Assert.Equal(1, await queue.SettleDeliveriesAsync(
            [new DeliverySettlement(first.Id, first.LeaseToken!.Value, DeliveryStatus.Pending, retryAt, 503, "the receiver answered 503", null, null)], Token));

        Assert.Empty(await queue.ClaimDueDeliveriesAsync("node-b", 10, TimeSpan.FromMinutes(5), Token));
        Assert.Equal(retryAt, await queue.GetNextDeliveryDueAsync(Token));
    }

    [Fact]
    public async Task A_commit_hands_a_delivery_to_its_node_only_while_none_of_its_instance_is_pending_and_the_subscription_is_enabled()
    {
        var queue = Factory.Get<IDeliveryQueue>();
        if (!queue.LeasesOnCommit)
        {
            Assert.Skip("this store does not lease deliveries on commit: every delivery is claimed");
        }

        var name = Definitions.Unique("handover");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var subscription = await SubscribeAsync(name);
        var started = await Api.StartAsync(name);

        // Its started event is pending: a delivery asked to be handed over waits behind it, unleased.
        var behind = await CommitAsync(started.Id, subscription, handOver: true);
        Assert.Null(behind.LeaseOwner);
        Assert.Equal(0, behind.Attempts);
        await DeliverEverythingClaimableAsync(queue);

        // None pending now: the commit writes it leased to its node, and the one after it in the same commit waits for it.
        var (handed, next) = await CommitTwoAsync(started.Id, subscription);
        Assert.Equal("node-x", handed.LeaseOwner);
        Assert.Null(next.LeaseOwner);
        var stored = await DeliveriesAsync(queue, subscription);
        Assert.Equal("node-x", stored.Single(d => d.Id == handed.Id).LeaseOwner);
        Assert.Equal(1, stored.Single(d => d.Id == handed.Id).Attempts);
        Assert.Empty(await queue.ClaimDueDeliveriesAsync("node-b", 10, TimeSpan.FromMinutes(5), Token));

        // Settled under its lease, it lets the next one be claimed.
        Assert.Equal(1, await queue.SettleDeliveriesAsync([Delivered(handed)], Token));
        var claimedNext = Assert.Single(await queue.ClaimDueDeliveriesAsync("node-b", 10, TimeSpan.FromMinutes(5), Token));
        Assert.Equal(next.Id, claimedNext.Id);
        await DeliverEverythingClaimableAsync(queue, alreadyClaimed: [claimedNext]);

        // A paused subscription's delivery is never handed over.
        using (var paused = await Api.Http.PostAsync($"/subscriptions/{subscription}/pause", null, Token))
        {
            Assert.True(paused.IsSuccessStatusCode, $"pause answered {(int)paused.StatusCode}");
        }

        var whilePaused = await CommitAsync(started.Id, subscription, handOver: true);
        Assert.Null(whilePaused.LeaseOwner);
        Assert.Null((await DeliveriesAsync(queue, subscription)).Single(d => d.Id == whilePaused.Id).LeaseOwner);
    }

    [Fact]
    public async Task Deliveries_settled_together_are_each_settled_only_under_their_own_lease()
    {
        var name = Definitions.Unique("settle");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var subscription = await SubscribeAsync(name);
        for (var i = 0; i < 3; i++)
        {
            await Api.StartAsync(name);
        }

        var queue = Factory.Get<IDeliveryQueue>();
        var claimed = await queue.ClaimDueDeliveriesAsync("node-a", 10, TimeSpan.FromMinutes(5), Token);
        Assert.Equal(3, claimed.Count);

        // The last one's lease is not ours (a stale token): two of three are settled, and the third stays pending and leased.
        var settlements = claimed.Select(Delivered).ToList();
        settlements[2] = settlements[2] with { LeaseToken = settlements[2].LeaseToken + 1 };
        Assert.Equal(2, await queue.SettleDeliveriesAsync(settlements, Token));

        var stored = await DeliveriesAsync(queue, subscription);
        Assert.All(claimed.Take(2), c =>
        {
            var d = stored.Single(s => s.Id == c.Id);
            Assert.Equal(DeliveryStatus.Delivered, d.Status);
            Assert.Equal(200, d.LastStatus);
            Assert.NotNull(d.DeliveredAt);
            Assert.Null(d.LeaseOwner);
        });
        var untouched = stored.Single(s => s.Id == claimed[2].Id);
        Assert.Equal(DeliveryStatus.Pending, untouched.Status);
        Assert.Equal("node-a", untouched.LeaseOwner);
    }

    private async Task<Guid> SubscribeAsync(string definition)
    {
        using var created = await Api.Http.PostAsJsonAsync("/subscriptions",
            new { name = Definitions.Unique("hooks"), endpoint = "https://receiver.example.com/hooks", events = EveryEvent, definitions = new[] { definition } },
            WorkflowServiceFactory.Json, Token);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        return (await created.Content.ReadFromJsonAsync<System.Text.Json.JsonElement>(WorkflowServiceFactory.Json, Token)).GetProperty("subscription").GetProperty("id").GetGuid();
    }

    private static DeliverySettlement Delivered(EventDelivery d) =>
        new(d.Id, d.LeaseToken!.Value, DeliveryStatus.Delivered, null, 200, null, DateTime.UtcNow, 1);

    private static async Task<List<EventDelivery>> DeliveriesAsync(IDeliveryQueue queue, Guid subscription) =>
        [.. (await queue.ListDeliveriesAsync("", subscription, null, null, 100, Token)).Items];

    /// <summary>Claims and settles as delivered until nothing is claimable (each claim takes an instance's first pending one).</summary>
    private static async Task DeliverEverythingClaimableAsync(IDeliveryQueue queue, IReadOnlyList<EventDelivery>? alreadyClaimed = null)
    {
        var claimed = alreadyClaimed ?? await queue.ClaimDueDeliveriesAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);
        for (var round = 0; claimed.Count > 0 && round < 20; round++)
        {
            Assert.Equal(claimed.Count, await queue.SettleDeliveriesAsync([.. claimed.Select(Delivered)], Token));
            claimed = await queue.ClaimDueDeliveriesAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);
        }

        Assert.Empty(claimed);
    }

    /// <summary>A wait point of the instance written by hand through the store, with one delivery of a custom event.</summary>
    private async Task<EventDelivery> CommitAsync(Guid instanceId, Guid subscription, bool handOver)
    {
        var commit = await CommitOfAsync(instanceId);
        var delivery = Delivery(commit.Instance, subscription);
        if (handOver)
        {
            Lease(delivery);
        }

        commit.Deliveries.Add(delivery);
        await Factory.Get<IInstanceStore>().CommitAsync(commit, Token);
        return delivery;
    }

    /// <summary>A commit with two deliveries to one subscription, the first asked to be handed over, as the engine asks.</summary>
    private async Task<(EventDelivery Handed, EventDelivery Next)> CommitTwoAsync(Guid instanceId, Guid subscription)
    {
        var commit = await CommitOfAsync(instanceId);
        var handed = Delivery(commit.Instance, subscription);
        Lease(handed);
        var next = Delivery(commit.Instance, subscription);
        commit.Deliveries.Add(handed);
        commit.Deliveries.Add(next);
        await Factory.Get<IInstanceStore>().CommitAsync(commit, Token);
        return (handed, next);
    }

    private async Task<WaitPointCommit> CommitOfAsync(Guid instanceId)
    {
        var snapshot = (await Factory.Get<IInstanceStore>().GetInstanceAsync("", instanceId, Token))!;
        return new WaitPointCommit { Instance = snapshot.Clone(), ExpectedVersion = snapshot.Version };
    }

    private EventDelivery Delivery(WorkflowInstance instance, Guid subscription)
    {
        var now = Factory.Get<IStoreClock>().NowMs();
        return new EventDelivery
        {
            Id = Guid.CreateVersion7(),
            SubscriptionId = subscription,
            Tenant = instance.Tenant,
            InstanceId = instance.Id,
            Type = "com.example.noted",
            Body = "{}",
            CreatedAt = DateTime.UnixEpoch.AddMilliseconds(now),
            DueAtMs = now,
        };
    }

    private void Lease(EventDelivery delivery)
    {
        delivery.LeaseOwner = "node-x";
        delivery.LeaseToken = 42;
        delivery.LeaseUntilMs = Factory.Get<IStoreClock>().NowMs() + 300_000;
        delivery.Attempts = 1;
    }
}

public sealed class SqliteDeliveryQueueContractTests : DeliveryQueueContractTests<SqliteBackend>;

public sealed class PostgresDeliveryQueueContractTests : DeliveryQueueContractTests<PostgresBackend>;

public sealed class MongoDbDeliveryQueueContractTests : DeliveryQueueContractTests<MongoDbBackend>;
