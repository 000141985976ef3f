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
}

public sealed class SqliteDeliveryQueueContractTests : DeliveryQueueContractTests<SqliteBackend>;

public sealed class PostgresDeliveryQueueContractTests : DeliveryQueueContractTests<PostgresBackend>;

public sealed class MongoDbDeliveryQueueContractTests : DeliveryQueueContractTests<MongoDbBackend>;
