using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Wake-ups across nodes from one change stream on the store's database: every node watches the signals that become
/// claimable (inserted pending, made pending again, given back unleased) and the instances that commit, so no node
/// sends anything. The server is the bus: a signal committed on one node wakes the workers of every node, and an
/// instance's commit the long-polls waiting on it (<see cref="InstanceChangeFeed.Hint"/>). This node's own hints still
/// wake it in process at once; its own echo from the stream costs one extra look, never a missed one.
/// </summary>
/// <remarks>
/// The stream's resume token is kept after every batch, so a reconnect resumes where the stream broke and misses nothing
/// the oplog still holds; when the oplog has moved past it, the stream starts afresh and the node looks once. Reconnects
/// back off (Polly: exponential, jittered, capped by Store:ChangeStreamMaxBackoff, at most Store:ChangeStreamMaxReconnects
/// failures in a row). While the stream is down <see cref="IsHealthy"/> is false (the health check reports Degraded) and
/// the dispatcher's bounded poll finds the work: the store, not the stream, is the truth.
/// </remarks>
public sealed partial class MongoChangeStreamWakeUp(
    MongoWorkflowStore store, IOptions<MongoStoreOptions> options, InProcessWakeUp local, InstanceChangeFeed changes, NodeIdentity node,
    TimeProvider time, ILogger<MongoChangeStreamWakeUp> logger)
    : IListeningWakeUpTransport, IHostedService, IAsyncDisposable
{
    public const string Name = "MongoDB change stream";

    /// <summary>The server's codes for a resume token it cannot resume from (ChangeStreamHistoryLost, ChangeStreamFatalError, InvalidResumeToken).</summary>
    private static readonly int[] HistoryLostCodes = [286, 280, 260];

    private readonly CancellationTokenSource _stopping = new();
    private readonly MongoStoreOptions _options = options.Value;
    private Task _listener = Task.CompletedTask;
    private BsonDocument? _resumeToken;
    private int _disposed;
    private long _received;

    private readonly ReconnectingListener _listening =
        new(Name, options.Value.ChangeStreamMaxReconnects, options.Value.ChangeStreamMaxBackoff, time, logger);

    public bool IsHealthy => _listening.IsListening;

    public bool HasGivenUp => _listening.HasGivenUp;

    /// <summary>Events received from the stream (signals due and instances committed, this node's own among them).</summary>
    public long NotificationsReceived => Interlocked.Read(ref _received);

    /// <summary>How many times the stream was opened (1 when it never had to reconnect).</summary>
    public long Subscriptions => _listening.Subscriptions;

    /// <summary>
    /// The comment the stream's aggregate carries, naming this node (its getMores inherit it): every node watches the same
    /// database, so this is how an operator tells the nodes' streams apart in $currentOp and the server's slow-query log,
    /// and which one to kill (killOp) to see a node fall back to its poll and reopen the stream.
    /// </summary>
    public string StreamComment { get; } = $"workflow-service wake-ups, node {node.Id}";

    // Nothing to send: the commit itself is the message every other node's stream delivers.
    public void Notify(long dueAtMs) => local.Notify(dueAtMs);

    public Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken) => local.WaitAsync(untilMs, cancellationToken);

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _listener = Task.Run(() => ListenAsync(_stopping.Token), CancellationToken.None);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _disposed) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await _listener.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The events a wake-up needs, and only their few fields: a signal inserted pending, one whose update made it
    /// pending or gave its lease back (a claim sets an owner and is left out: it wakes nobody), and any write of an
    /// instance. Updates carry their changed fields only, never the whole document.
    /// </summary>
    private static BsonDocument[] Pipeline() =>
    [
        new("$match", new BsonDocument("$or", new BsonArray
        {
            new BsonDocument { { "ns.coll", MongoWorkflowStore.InstancesCollection }, { "operationType", new BsonDocument("$in", new BsonArray { "insert", "update", "replace" }) } },
            new BsonDocument { { "ns.coll", MongoWorkflowStore.SignalsCollection }, { "operationType", "insert" }, { "fullDocument.status", "Pending" } },
            new BsonDocument { { "ns.coll", MongoWorkflowStore.SignalsCollection }, { "operationType", "update" }, { "updateDescription.updatedFields.status", "Pending" } },
            new BsonDocument
            {
                { "ns.coll", MongoWorkflowStore.SignalsCollection }, { "operationType", "update" },
                { "updateDescription.updatedFields.leaseOwner", new BsonDocument("$type", "null") },
            },
        })),
        new("$project", new BsonDocument
        {
            { "ns.coll", 1 },
            { "documentKey", 1 },
            { "fullDocument.dueAtMs", 1 },
            { "updateDescription.updatedFields.dueAtMs", 1 },
        }),
    ];

    private Task ListenAsync(CancellationToken stopping) =>
        _listening.RunAsync(ListenOnceAsync, failure =>
        {
            if (IsHistoryLost(failure))
            {
                // The oplog moved past the token: start afresh; the look on subscribing finds what was missed.
                _resumeToken = null;
            }
        }, stopping);

    /// <summary>One stream, read until it breaks (a failure to open it throws, for the retry).</summary>
    private async Task ListenOnceAsync(CancellationToken stopping)
    {
        var streamOptions = new ChangeStreamOptions
        {
            // The server answers an empty batch after this long: a quiet stream still proves its connection alive.
            MaxAwaitTime = _options.ChangeStreamMaxAwait,
            ResumeAfter = _resumeToken,
            Comment = StreamComment,
        };
        using var cursor = await store.Database.WatchAsync(
            new BsonDocumentStagePipelineDefinition<ChangeStreamDocument<BsonDocument>, BsonDocument>(Pipeline()), streamOptions, stopping)
            .ConfigureAwait(false);
        _listening.Opened(_resumeToken is null ? "from now" : "resumed after its last event");
        // Anything committed while nobody watched is due now: look once.
        local.Notify(0);
        while (await cursor.MoveNextAsync(stopping).ConfigureAwait(false))
        {
            foreach (var change in cursor.Current)
            {
                Receive(change);
            }

            _resumeToken = cursor.GetResumeToken();
        }

        // The server closed the stream (an invalidate: the database was dropped or renamed). A stream cannot resume after its
        // invalidate event: the next one starts afresh.
        _resumeToken = null;
        throw new InvalidOperationException("the change stream was closed by the server (was the store's database dropped or renamed?)");
    }

    /// <summary>True when the server no longer holds the resume token's place in its oplog (resuming would fail again).</summary>
    private static bool IsHistoryLost(Exception exception) =>
        exception is MongoCommandException { Code: var code } && HistoryLostCodes.Contains(code);

    /// <summary>One event: a signal that may be claimed at its due time (now, when the event does not say), or an instance that committed.</summary>
    internal void Receive(BsonDocument change)
    {
        Interlocked.Increment(ref _received);
        var collection = change.TryGetValue("ns", out var ns) && ns.IsBsonDocument && ns.AsBsonDocument.TryGetValue("coll", out var coll) ? coll.AsString : null;
        if (!change.TryGetValue("documentKey", out var key) || !key.AsBsonDocument.TryGetValue("_id", out var id) || !id.IsBsonBinaryData)
        {
            return;
        }

        if (collection == MongoWorkflowStore.InstancesCollection)
        {
            changes.Hint(id.AsBsonBinaryData.ToGuid());
            return;
        }

        local.Notify(DueAt(change, "fullDocument") ?? DueAt(change, "updateDescription", "updatedFields") ?? 0);
    }

    private static long? DueAt(BsonDocument change, params string[] path)
    {
        BsonValue current = change;
        foreach (var part in path)
        {
            if (!current.IsBsonDocument || !current.AsBsonDocument.TryGetValue(part, out current))
            {
                return null;
            }
        }

        return current.IsBsonDocument && current.AsBsonDocument.TryGetValue("dueAtMs", out var due) && due.IsNumeric ? due.ToInt64() : null;
    }

    public async ValueTask DisposeAsync()
    {
        // Registered under several service types, so the container may dispose it more than once.
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        try
        {
            await _listener.WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // The stream's last getMore is still waiting on the server (at most Store:ChangeStreamMaxAwait); the process is leaving.
        }

        _stopping.Dispose();
    }
}
