using MongoDB.Bson;
using MongoDB.Driver;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Providers.Storage;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// The workflow store on MongoDB (a replica set): one collection per aggregate (instances with their wait state and
/// branches, signals, tasks, definitions, history), plus the named leases and the schema document. One instance serves
/// every facet of the store contract, each in a file of its own (MongoWorkflowStore.*.cs), with the same semantics as
/// the relational store; this part holds what they share: the collections and the transaction loop.
/// </summary>
/// <remarks>
/// Every write that must be atomic across documents runs in one multi-document transaction (<see cref="InTransactionAsync{T}"/>),
/// and each call site says why its boundary is where it is. Single-document writes (a claim, a lease, a task claim) are
/// atomic on their own and run without one.
/// </remarks>
public sealed partial class MongoWorkflowStore : IAsyncDisposable
{
    public const string InstancesCollection = "instances";
    public const string SignalsCollection = "signals";
    public const string HistoryCollection = "history";
    public const string TasksCollection = "tasks";
    public const string DefinitionsCollection = "definitions";
    public const string LeasesCollection = "leases";
    public const string SchemaCollection = "schema";
    public const string SubscriptionsCollection = "subscriptions";
    public const string DeliveriesCollection = "deliveries";

    /// <summary>Every collection the store uses: created explicitly at start-up, never implicitly inside a transaction.</summary>
    internal static readonly string[] Collections =
        [InstancesCollection, SignalsCollection, HistoryCollection, TasksCollection, DefinitionsCollection, LeasesCollection, SchemaCollection,
            SchedulesCollection, SearchAttributesCollection];

    private readonly IMongoClient _client;
    private readonly IMongoDatabase _database;
    private readonly MongoStoreOptions _options;
    private readonly TimeProvider _time;
    private readonly DatabaseClock _clock;
    private readonly TransactionOptions _transaction;
    private readonly IMongoCollection<InstanceDocument> _instances;
    private readonly IMongoCollection<SignalDocument> _signals;
    private readonly IMongoCollection<HistoryDocument> _history;
    private readonly IMongoCollection<TaskDocument> _tasks;
    private readonly IMongoCollection<DefinitionDocument> _definitions;
    private readonly IMongoCollection<LeaseDocument> _leases;
    private readonly IMongoCollection<SchemaDocument> _schema;
    private readonly IMongoCollection<SubscriptionDocument> _subscriptions;
    private readonly IMongoCollection<DeliveryDocument> _deliveries;

    /// <summary>
    /// The claims' view of the signals: acknowledged by the primary alone (w:1), as the PostgreSQL store's claims commit
    /// without waiting for the WAL flush. A claim lost in a failover is harmless: the signal is claimed again once its
    /// lease runs out, and the wait point's commit checks the lease token.
    /// </summary>
    private readonly IMongoCollection<SignalDocument> _claims;

    /// <summary>Wait points go through group commit: several callers' wait points share one transaction under load.</summary>
    private readonly MongoGroupCommit _group;

    public MongoWorkflowStore(IMongoClient client, IOptions<MongoStoreOptions> options, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(client);
        ArgumentNullException.ThrowIfNull(options);
        _client = client;
        _options = options.Value;
        _time = time;
        _clock = new DatabaseClock(time);
        // Every other write waits for a majority of the replica set: what a caller was told is stored survives a failover.
        // Reads are the primary's own (read concern local): they see this node's claims, written w:1, at once; a majority
        // read could miss one for a moment and read a signal as unleased that this node has just leased.
        _database = client.GetDatabase(_options.Database, new MongoDatabaseSettings
        {
            WriteConcern = WriteConcern.WMajority,
            ReadConcern = ReadConcern.Local,
            ReadPreference = ReadPreference.Primary,
        });
        // Snapshot reads inside a transaction: every read of a wait point or a replay sees one point in time, and a write
        // conflict with another transaction aborts one of them (retried by InTransactionAsync, then found stale).
        _transaction = new TransactionOptions(
            readConcern: ReadConcern.Snapshot,
            readPreference: ReadPreference.Primary,
            writeConcern: WriteConcern.WMajority,
            maxCommitTime: (TimeSpan?)_options.TransactionCommitTimeout);
        _instances = _database.GetCollection<InstanceDocument>(InstancesCollection);
        _signals = _database.GetCollection<SignalDocument>(SignalsCollection);
        _history = _database.GetCollection<HistoryDocument>(HistoryCollection);
        _tasks = _database.GetCollection<TaskDocument>(TasksCollection);
        _definitions = _database.GetCollection<DefinitionDocument>(DefinitionsCollection);
        _leases = _database.GetCollection<LeaseDocument>(LeasesCollection);
        _schema = _database.GetCollection<SchemaDocument>(SchemaCollection);
        _subscriptions = _database.GetCollection<SubscriptionDocument>(SubscriptionsCollection);
        _deliveries = _database.GetCollection<DeliveryDocument>(DeliveriesCollection);
        _claims = _signals.WithWriteConcern(WriteConcern.W1);
        _group = new MongoGroupCommit(_options.GroupCommitWriters, _options.GroupCommitMaxBatch, CommitGroupAsync, CommitOneAsync);
    }

    /// <summary>Commits what is queued for group commit (within a bound), then stops its writers.</summary>
    public ValueTask DisposeAsync() => _group.DisposeAsync();

    /// <summary>The store's database, for the change-stream wake-ups and the tests.</summary>
    public IMongoDatabase Database => _database;

    /// <summary>
    /// Runs <paramref name="work"/> in one multi-document transaction on a session of its own, and commits it. A
    /// transient failure (the server's TransientTransactionError label: a write conflict with another transaction, a
    /// primary stepping down) runs the whole transaction again, and a commit whose outcome is unknown
    /// (UnknownTransactionCommitResult) is committed again, each at most <see cref="MongoStoreOptions.TransactionRetries"/>
    /// times: the driver's WithTransactionAsync would keep trying for 120 s. Any other failure aborts and is thrown.
    /// </summary>
    private async Task<T> InTransactionAsync<T>(Func<IClientSessionHandle, CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        using var session = await _client.StartSessionAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        for (var attempt = 0; ; attempt++)
        {
            session.StartTransaction(_transaction);
            T result;
            try
            {
                result = await work(session, cancellationToken).ConfigureAwait(false);
            }
            catch (MongoException e) when (attempt < _options.TransactionRetries && e.HasErrorLabel("TransientTransactionError"))
            {
                await AbortAsync(session).ConfigureAwait(false);
                continue;
            }
            catch
            {
                await AbortAsync(session).ConfigureAwait(false);
                throw;
            }

            if (await CommitTransactionAsync(session, attempt, cancellationToken).ConfigureAwait(false))
            {
                return result;
            }
        }
    }

    /// <summary>Commits; false when the whole transaction should run again (a transient failure at commit, retries left).</summary>
    private async Task<bool> CommitTransactionAsync(IClientSessionHandle session, int attempt, CancellationToken cancellationToken)
    {
        for (var commit = 0; ; commit++)
        {
            try
            {
                await session.CommitTransactionAsync(cancellationToken).ConfigureAwait(false);
                return true;
            }
            catch (MongoException e) when (commit < _options.TransactionRetries && e.HasErrorLabel("UnknownTransactionCommitResult"))
            {
                // The commit may or may not have happened (a network error, a majority not reached in time): committing
                // again is safe, the server answers the first outcome.
            }
            catch (MongoException e) when (attempt < _options.TransactionRetries && e.HasErrorLabel("TransientTransactionError"))
            {
                return false;
            }
        }
    }

    private static async Task AbortAsync(IClientSessionHandle session)
    {
        if (!session.IsInTransaction)
        {
            return;
        }

        try
        {
            // Not cancellable: a transaction left open holds its locks until the server's transactionLifetimeLimitSeconds.
            await session.AbortTransactionAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (MongoException)
        {
            // Already aborted by the server (the failure that brought us here); nothing is left to undo.
        }
    }

    /// <summary>True when <paramref name="exception"/> is a unique-index violation (error code 11000), by code, never by text.</summary>
    internal static bool IsDuplicateKey(Exception exception) => exception switch
    {
        MongoWriteException write => write.WriteError?.Category == ServerErrorCategory.DuplicateKey,
        MongoBulkWriteException bulk => bulk.WriteErrors.Any(e => e.Category == ServerErrorCategory.DuplicateKey),
        MongoCommandException command => command.Code == DuplicateKeyCode,
        _ => false,
    };

    private const int DuplicateKeyCode = 11000;

    /// <summary>A pipeline update (aggregation stages as the update), for changes that read the document's own fields.</summary>
    private static UpdateDefinition<T> Pipeline<T>(BsonDocument set) =>
        Builders<T>.Update.Pipeline(new BsonDocumentStagePipelineDefinition<T, T>([new BsonDocument("$set", set)]));
}
