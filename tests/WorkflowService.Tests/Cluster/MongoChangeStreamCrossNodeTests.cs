using System.Text.RegularExpressions;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The cross-node contract on the MongoDB store's change-stream wake-ups (WakeUp:Transport Auto). The stream sends
/// nothing: every node watches the store's database, and another node's commit is the event that wakes this one.
/// </summary>
public sealed class MongoChangeStreamCrossNodeTests : CrossNodeWakeUpTests<MongoDbBackend, MongoChangeStreamWakeUp>
{
    protected override async Task AssertTheSendingNodeAsync(MongoChangeStreamWakeUp sender)
    {
        Assert.Equal(0, ((IWakeUpTransport)sender).NotificationsSent);
        // Its own stream delivers the commit as every other node's does (its own echo costs it one look, never a miss).
        await Eventually.WaitUntilAsync(() => sender.NotificationsReceived >= 1, what: "the sending node's own stream delivers its commit");
    }

    /// <summary>
    /// Kills the getMore this node's stream waits in on the server (killOp): the server answers it with Interrupted, an
    /// error the driver does not resume from by itself (killCursors would not do: the driver resumes after a
    /// CursorNotFound on its own, and the node would never see its stream lost). The stream's getMore waits up to
    /// Store:ChangeStreamMaxAwait and is followed at once by the next, so between two there may be none to kill: this
    /// kills until the node runs its stream on a cursor other than the killed one, that is, until it opened it again.
    /// </summary>
    protected override async Task KillListenerAsync(WorkflowServiceFactory node, BackendDatabase database)
    {
        var comment = node.Get<MongoChangeStreamWakeUp>().StreamComment;
        var store = database.Settings["Store:Database"]!;
        using var client = new MongoClient(database.Settings["Store:ConnectionString"]);
        var admin = client.GetDatabase("admin");
        var ct = TestContext.Current.CancellationToken;
        BsonValue? killed = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            var getMores = await WaitingGetMoresAsync(admin, store, comment, ct);
            if (killed is not null && getMores.Any(g => !g["command"]["getMore"].Equals(killed)))
            {
                return true;
            }

            foreach (var getMore in getMores)
            {
                await admin.RunCommandAsync<BsonDocument>(new BsonDocument { { "killOp", 1 }, { "op", getMore["opid"] } }, cancellationToken: ct);
                killed = getMore["command"]["getMore"];
            }

            return false;
        }, what: "the node's killed change stream is opened again, on a new cursor");
    }

    /// <summary>
    /// The getMores in progress on the change stream that watches <paramref name="store"/> with <paramref name="comment"/>
    /// (node ids repeat across the test classes that run at once on the same server, each on a database of its own).
    /// </summary>
    private static async Task<List<BsonDocument>> WaitingGetMoresAsync(IMongoDatabase admin, string store, string comment, CancellationToken ct)
    {
        BsonDocument[] pipeline =
        [
            // Every user's operations: the test's client need not be the one the service connected as.
            new("$currentOp", new BsonDocument("allUsers", true)),
            // A database's change stream is a cursor of "<database>.$cmd.aggregate".
            new("$match", new BsonDocument
            {
                { "op", "getmore" },
                { "ns", new BsonRegularExpression($"^{Regex.Escape(store)}\\.") },
                { "cursor.originatingCommand.comment", comment },
            }),
        ];
        using var cursor = await admin.AggregateAsync(new BsonDocumentStagePipelineDefinition<NoPipelineInput, BsonDocument>(pipeline), cancellationToken: ct);
        return await cursor.ToListAsync(ct);
    }
}
