using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.MongoDb;

namespace WorkflowService.Tests.Store;

/// <summary>
/// What the change-stream wake-ups make of the events the server sends, as the server shapes them after the stream's
/// pipeline: runs without a server (the client is never asked to connect). The stream itself is exercised by the
/// MongoDB suites, where a replica set is there.
/// </summary>
public sealed class MongoChangeStreamEventTests
{
    private static readonly MongoStoreOptions Options = new() { ConnectionString = "mongodb://unreachable.invalid:27017/?replicaSet=rs0" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static BsonDocument Event(string collection, Guid id, BsonDocument? fullDocument = null, BsonDocument? updatedFields = null)
    {
        var change = new BsonDocument
        {
            { "_id", new BsonDocument("_data", "token") },
            { "ns", new BsonDocument("coll", collection) },
            { "documentKey", new BsonDocument("_id", new BsonBinaryData(id, GuidRepresentation.Standard)) },
        };
        if (fullDocument is not null) change.Add("fullDocument", fullDocument);
        if (updatedFields is not null) change.Add("updateDescription", new BsonDocument("updatedFields", updatedFields));
        return change;
    }

    [Fact]
    public async Task A_signal_that_became_claimable_wakes_the_workers_and_an_instance_that_committed_hints_its_long_polls()
    {
        using var client = new MongoClient(Options.ConnectionString);
        var store = new MongoWorkflowStore(client, Microsoft.Extensions.Options.Options.Create(Options), TimeProvider.System);
        var local = new InProcessWakeUp(TimeProvider.System, store);
        var feed = new InstanceChangeFeed();
        var node = new NodeIdentity(Microsoft.Extensions.Options.Options.Create(new WorkerOptions { NodeId = "events" }));
        await using var stream = new MongoChangeStreamWakeUp(store, Microsoft.Extensions.Options.Options.Create(Options), local, feed,
            node, TimeProvider.System, NullLogger<MongoChangeStreamWakeUp>.Instance);

        // An insert of a pending signal due now: the workers' wait (planned for a minute from now) ends at once.
        stream.Receive(Event(MongoWorkflowStore.SignalsCollection, Guid.NewGuid(), fullDocument: new BsonDocument("dueAtMs", store.NowMs())));
        var wait = local.WaitAsync(store.NowMs() + 60_000, Token);
        Assert.True(await wait.WaitAsync(TimeSpan.FromSeconds(10), Token));

        // An update that gave a lease back (no due time in the event): due now.
        stream.Receive(Event(MongoWorkflowStore.SignalsCollection, Guid.NewGuid(), updatedFields: new BsonDocument("leaseOwner", BsonNull.Value)));
        Assert.True(await local.WaitAsync(store.NowMs() + 60_000, Token).WaitAsync(TimeSpan.FromSeconds(10), Token));

        // A commit of an instance a long-poll here waits on: hinted.
        var instanceId = Guid.NewGuid();
        var change = feed.NextChange(instanceId);
        feed.Observed(instanceId, change, 1);
        stream.Receive(Event(MongoWorkflowStore.InstancesCollection, instanceId));
        await feed.HintArrived.WaitAsync(TimeSpan.FromSeconds(10), Token);
        Assert.Contains(instanceId, feed.TakeHinted());

        Assert.Equal(3, stream.NotificationsReceived);
        Assert.False(stream.IsHealthy);
    }
}
