using System.Net.Mime;
using System.Text;
using CloudNative.CloudEvents.SystemTextJson;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.UnitTests.Events;

/// <summary>A batch's body, read back with the CloudEvents SDK's batch decoder, and its webhook-id.</summary>
public sealed class EventBatchTests
{
    private static EventDelivery Delivery(string type)
    {
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(), DefinitionName = "claims", DefinitionVersion = 1, Tenant = "", Status = InstanceStatus.Running,
        };
        var id = Guid.CreateVersion7();
        return new EventDelivery
        {
            Id = id, InstanceId = instance.Id, Type = type,
            Body = CloudEventBody.Build(id, type, instance, new HistoryEvent { InstanceId = instance.Id, At = DateTime.UtcNow, Type = HistoryEventTypes.EventEmitted },
                null, null),
        };
    }

    private static readonly EventDelivery[] Three = [Delivery("claim.approved"), Delivery("claim.paid"), Delivery("claim.closed")];

    [Fact]
    public void A_batch_is_the_events_in_order_as_the_SDK_decodes_a_batch()
    {
        var decoded = new JsonEventFormatter().DecodeBatchModeMessage(Encoding.UTF8.GetBytes(EventBatch.Body(Three)),
            new ContentType(EventBatch.MediaType), null);
        Assert.Equal(Three.Select(d => d.Id.ToString()), decoded.Select(e => e.Id));
        Assert.Equal(Three.Select(d => d.Type), decoded.Select(e => e.Type));
    }

    [Fact]
    public void A_batch_of_one_is_still_an_array() =>
        Assert.Single(new JsonEventFormatter().DecodeBatchModeMessage(Encoding.UTF8.GetBytes(EventBatch.Body([Three[0]])),
            new ContentType(EventBatch.MediaType), null));

    [Fact]
    public void The_webhook_id_is_the_same_for_the_same_events_and_differs_for_others()
    {
        var id = EventBatch.IdOf(Three);
        Assert.Matches("^batch_[0-9a-f]{32}$", id);
        Assert.Equal(id, EventBatch.IdOf([.. Three]));
        Assert.NotEqual(id, EventBatch.IdOf(Three[..2]));
        Assert.NotEqual(id, EventBatch.IdOf([Three[1], Three[0], Three[2]]));
        Assert.NotEqual(EventBatch.IdOf([Three[0]]), Three[0].Id.ToString());
    }

    [Fact]
    public void A_large_batch_has_an_id_too()
    {
        var many = Enumerable.Range(0, 100).Select(_ => Delivery("claim.approved")).ToArray();
        Assert.NotEqual(EventBatch.IdOf(many), EventBatch.IdOf(many[..99]));
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, true)]
    [InlineData(100, true)]
    public void Only_a_subscription_of_more_than_one_event_per_request_takes_batches(int size, bool batched) =>
        Assert.Equal(batched, EventBatch.IsBatched(new Subscription { Name = "n", Endpoint = "https://x.example", Secret = "s", MaxEventsPerBatch = size }));
}
