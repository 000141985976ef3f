using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Options;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.MongoDb;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// MongoDB: a fresh database per run (wf_bench_&lt;timestamp&gt;_&lt;random&gt;) on the replica set the connection string
/// names, dropped afterwards. The service's connections carry an application name of their own (the run's database
/// name), so that the server's view of connections ($currentOp) can tell them from anyone else's. Counters come from
/// <c>top</c> (the run's database only: operations per collection), <c>serverStatus</c> (whole server: transactions and
/// the journal) and <c>dbStats</c> (the run's database), read on the admin database, which the service never uses.
/// </summary>
internal sealed class MongoDbBackend : Backend
{
    /// <summary>The replica set of the MongoDB suites, which the runner uses too when --mongodb is not given.</summary>
    public const string ServerVariable = "WORKFLOW_TESTS_MONGODB";

    /// <summary>Why the runner stops at once without a server (one line, no stack trace).</summary>
    public const string NoServer = $"no MongoDB server: pass --mongodb or set {ServerVariable}";

    /// <summary>The store's connection pool per node (Store:MaxPoolSize, its default).</summary>
    public const int ServicePoolSize = 20;

    /// <summary>The driver's monitoring connections per node to the primary (the heartbeat and the round-trip-time check).</summary>
    public const int MonitoringConnections = 2;

    private readonly string _server;
    private readonly bool _keep;
    private readonly MongoClient _admin;
    private string _database = string.Empty;

    public MongoDbBackend(string server, bool keep)
    {
        _server = server;
        _keep = keep;
        // The runner's own reads: never counted as the service's connections, and never waiting longer than a store call.
        var settings = MongoClientSettings.FromConnectionString(server);
        settings.ApplicationName = "workflow-bench-runner";
        settings.ServerSelectionTimeout = TimeSpan.FromSeconds(30);
        _admin = new MongoClient(settings);
    }

    /// <summary>The server from --mongodb or the environment; the runner's command line stops earlier with <see cref="NoServer"/>.</summary>
    public static string RequireServer(string? server) =>
        string.IsNullOrWhiteSpace(server) ? throw new InvalidOperationException(NoServer) : server;

    public override string Name => "mongodb";

    /// <summary>The service's application name on this run's connections.</summary>
    private string ServiceApplication => "workflow-" + _database;

    private string ServiceConnectionString => new MongoUrlBuilder(_server) { ApplicationName = ServiceApplication }.ToString();

    public override IReadOnlyDictionary<string, string> ServiceEnvironment => new Dictionary<string, string>
    {
        ["Store__Provider"] = "MongoDb",
        ["Store__ConnectionString"] = ServiceConnectionString,
        ["Store__Database"] = _database,
    };

    public override IReadOnlyList<string> CounterNotes =>
    [
        "queries, getmores, inserts, updates, removes, commands: the server's top command summed over the run's database's collections (operations, each counted once; a multi-document transaction's statements each count).",
        "transactions committed, transactions aborted: serverStatus.transactions.totalCommitted and totalAborted (whole server: the store's wait points, creations and replays are multi-document transactions; single-document writes such as claims are not transactions).",
        "journal bytes: serverStatus.wiredTiger.log \"log bytes written\" (whole server), the journal WiredTiger writes before it acknowledges a write.",
        "documents, data bytes, index bytes: dbStats of the run's database (objects, dataSize, indexSize) at the moment of reading; their difference is the growth.",
        "Whole-server figures include anything else the replica set's primary did meanwhile, and the replication of the run's writes to the secondaries is not in them.",
    ];

    /// <summary>Per node: the store's pool on the primary plus the driver's two monitoring connections to it (the heartbeat and the round-trip-time check).</summary>
    public override int? ConnectionsPerNode => ServicePoolSize + MonitoringConnections;

    public override async Task ProvisionAsync(string workDirectory, CancellationToken cancellationToken)
    {
        _database = $"wf_bench_{DateTime.UtcNow:yyyyMMdd_HHmmss}_{Guid.NewGuid().ToString("N")[..6]}";
        // MongoDB creates a database with its first collection (the service creates them at start-up); here the server is
        // only checked, so that anything but a replica set is refused before any service starts: a standalone mongod has
        // no transactions or change streams for the store, and a sharded cluster's router answers neither top nor
        // $currentOp for the counters.
        var hello = await AdminCommandAsync("hello", cancellationToken);
        if (!hello.Contains("setName"))
        {
            throw new InvalidOperationException("the MongoDB server is not a replica set member (hello has no setName): the runner needs a replica set");
        }
    }

    public override async Task<IReadOnlyDictionary<string, string>> ReadFactsAsync(CancellationToken cancellationToken)
    {
        var build = await AdminCommandAsync("buildInfo", cancellationToken);
        var hello = await AdminCommandAsync("hello", cancellationToken);
        var status = await ServerStatusAsync(cancellationToken);
        var facts = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["database"] = _database,
            ["version"] = $"MongoDB {build.GetValue("version", "unknown")}",
            ["replica set"] = hello["setName"].AsString,
            ["primary"] = hello.GetValue("primary", "unknown").ToString()!,
            ["members"] = hello.TryGetValue("hosts", out var hosts) ? string.Join(", ", hosts.AsBsonArray) : "unknown",
            ["storage engine"] = status.TryGetValue("storageEngine", out var engine) ? engine.AsBsonDocument.GetValue("name", "unknown").ToString()! : "unknown",
            // The store sets its write concerns itself (majority; its claims w:1), so the server's default applies to no store write.
            ["store write concern"] = "w:majority for every write and transaction; w:1 for claims and lease extensions (MongoWorkflowStore)",
            ["service connection TLS"] = new MongoUrl(_server).UseTls ? "on" : "off",
        };
        foreach (var (fact, read) in new (string, Func<Task<string>>)[]
                 {
                     ("default write concern", async () => (await AdminCommandAsync("getDefaultRWConcern", cancellationToken)).GetValue("defaultWriteConcern", "implicit").ToString()!),
                     ("writeConcernMajorityJournalDefault", async () =>
                         (await AdminCommandAsync("replSetGetConfig", cancellationToken))["config"].AsBsonDocument.GetValue("writeConcernMajorityJournalDefault", true).ToString()!),
                 })
        {
            try
            {
                facts[fact] = await read();
            }
            catch (MongoCommandException e)
            {
                // A user without the privilege to read it: said as such rather than failing the run.
                facts[fact] = $"not readable: {e.CodeName}";
            }
        }

        return facts;
    }

    /// <summary>listIndexes of every collection of the store, as the server reports each index (name, keys, options).</summary>
    public override async Task<IReadOnlyList<string>> ReadIndexesAsync(CancellationToken cancellationToken)
    {
        var database = _admin.GetDatabase(_database);
        var indexes = new List<string>();
        foreach (var collection in MongoWorkflowStore.Collections)
        {
            using var cursor = await database.GetCollection<BsonDocument>(collection).Indexes.ListAsync(cancellationToken);
            foreach (var index in await cursor.ToListAsync(cancellationToken))
            {
                var options = index.Names.Where(n => n is not ("v" or "key" or "name" or "ns")).Select(n => $"{n}: {index[n]}");
                indexes.Add($"{collection}.{index["name"]} {index["key"]}{string.Concat(options.Select(o => ", " + o))}");
            }
        }

        return indexes;
    }

    public override async Task<IReadOnlyDictionary<string, long>> ReadCountersAsync(int? writerPid, CancellationToken cancellationToken)
    {
        var counters = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (counter, count) in await TopAsync(cancellationToken))
        {
            counters[counter] = count;
        }

        var status = await ServerStatusAsync(cancellationToken);
        var transactions = status["transactions"].AsBsonDocument;
        counters["transactions committed"] = transactions["totalCommitted"].ToInt64();
        counters["transactions aborted"] = transactions["totalAborted"].ToInt64();
        if (status.TryGetValue("wiredTiger", out var wiredTiger) && wiredTiger.AsBsonDocument.TryGetValue("log", out var log)
                                                              && log.AsBsonDocument.TryGetValue("log bytes written", out var journal))
        {
            counters["journal bytes"] = journal.ToInt64();
        }

        var stats = await _admin.GetDatabase(_database).RunCommandAsync<BsonDocument>(new BsonDocument("dbStats", 1), cancellationToken: cancellationToken);
        counters["documents"] = stats["objects"].ToInt64();
        counters["data bytes"] = stats["dataSize"].ToInt64();
        counters["index bytes"] = stats["indexSize"].ToInt64();
        return counters;
    }

    /// <summary>
    /// Every operation on the run's database (top: queries, getmores, inserts, updates, removes and commands of its
    /// collections), read on the admin database so that the reading is not counted.
    /// </summary>
    public override async Task<long?> ReadServerTransactionsAsync(CancellationToken cancellationToken) =>
        (await TopAsync(cancellationToken)).Sum(c => c.Count);

    public override string ServerTransactionsSource =>
        "the server's top command summed over the run's database's collections (queries, getmores, inserts, updates, removes, commands: every operation of the store's pool and change stream), read on the admin database so that the readings are not counted; MongoDB has no per-database transaction count, and a single-document write is not a transaction";

    public override async Task<string> SeedCompletedInstancesAsync(int count, CancellationToken cancellationToken)
    {
        var baseMs = SeedBaseMs(count);
        var database = _admin.GetDatabase(_database, new MongoDatabaseSettings { WriteConcern = WriteConcern.WMajority });
        var instances = database.GetCollection<InstanceDocument>(MongoWorkflowStore.InstancesCollection);
        var signals = database.GetCollection<SignalDocument>(MongoWorkflowStore.SignalsCollection);
        var history = database.GetCollection<HistoryDocument>(MongoWorkflowStore.HistoryCollection);
        var unordered = new InsertManyOptions { IsOrdered = false };
        var clock = Stopwatch.StartNew();
        for (var lo = 1; lo <= count; lo += SeedBatch)
        {
            var hi = Math.Min(count, lo + SeedBatch - 1);
            var batch = Enumerable.Range(lo, hi - lo + 1).Select(n => CompletedRoundtripSeed.Build(n, baseMs + n * 1000L)).ToList();
            // The store's own document classes (Documents.cs) from the engine's models: the shape the store writes for a
            // completed signal-roundtrip instance, its handled "go" signal and its history (CompletedRoundtripSeed).
            await instances.InsertManyAsync(batch.Select(s => InstanceDocument.From(s.Instance)), unordered, cancellationToken);
            await signals.InsertManyAsync(batch.Select(s => SignalDocument.From(s.Signal)), unordered, cancellationToken);
            await history.InsertManyAsync(batch.SelectMany(s => s.History).Select(HistoryDocument.From), unordered, cancellationToken);
            Console.WriteLine($"    seeded {hi:N0}/{count:N0} completed instances ({clock.Elapsed.TotalSeconds:F0} s)");
        }

        return string.Create(CultureInfo.InvariantCulture,
            $"{count:N0} completed signal-roundtrip instances ({count:N0} instance documents, {count * (long)CompletedRoundtripSeed.History.Count:N0} history documents, {count:N0} handled signals) inserted with the store's document classes by unordered insertMany (w:majority) in batches of {SeedBatch:N0} in {clock.Elapsed.TotalSeconds:F0} s; MongoDB keeps no planner statistics to refresh");
    }

    public override Task<CeilingSession> OpenCeilingAsync(int connections, bool groupCommit, CancellationToken cancellationToken) =>
        // Ungrouped, each wait point is a transaction of its own (Store:GroupCommitMaxBatch 1); grouped, as the service commits them.
        MongoCeilingSession.OpenAsync(new MongoStoreOptions
        {
            ConnectionString = ServiceConnectionString, Database = _database, MaxPoolSize = connections,
            GroupCommitMaxBatch = groupCommit ? new MongoStoreOptions().GroupCommitMaxBatch : 1,
            GroupCommitWriters = Math.Min(new MongoStoreOptions().GroupCommitWriters, Math.Max(1, connections - 1)),
        }, cancellationToken);

    public override Task<StoreSnapshotReader> OpenStoreReaderAsync(CancellationToken cancellationToken) =>
        Task.FromResult<StoreSnapshotReader>(new MongoStoreSnapshotReader(_admin.GetDatabase(_database)));

    /// <summary>The MongoDB store's waits: a server to choose, a connection to open and an answer on the socket, each within <paramref name="timeout"/>.</summary>
    public override IReadOnlyDictionary<string, string> StoreTimeoutSettings(TimeSpan timeout)
    {
        var value = timeout.ToString("c", CultureInfo.InvariantCulture);
        return new Dictionary<string, string>
        {
            ["Store__ServerSelectionTimeout"] = value,
            ["Store__ConnectTimeout"] = value,
            ["Store__SocketTimeout"] = value,
            ["Store__TransactionCommitTimeout"] = value,
            // The change stream's wait must end before its socket times out (MongoStoreOptions refuses it otherwise).
            ["Store__ChangeStreamMaxAwait"] = (timeout / 2).ToString("c", CultureInfo.InvariantCulture),
        };
    }

    /// <summary>The replica set's primary, as the server names it (hello.primary): the one member the store reads and writes.</summary>
    public override async Task<(string Host, int Port)> ReadServerAddressAsync(CancellationToken cancellationToken)
    {
        var hello = await AdminCommandAsync("hello", cancellationToken);
        var primary = hello.TryGetValue("primary", out var named) ? named.AsString
            : throw new InvalidOperationException("the MongoDB server names no primary (hello.primary): a fault row needs a replica set with one");
        var address = MongoServerAddress.Parse(primary);
        return (address.Host, address.Port);
    }

    /// <summary>
    /// Through the proxy to the primary alone: directConnection=true, since the replica set's own member list names the
    /// members' real addresses, which the driver would otherwise follow around the proxy.
    /// </summary>
    public override string ServiceConnectionStringVia(int port) => new MongoUrlBuilder(ServiceConnectionString)
    {
        // A mongodb+srv:// name would be looked up in DNS and cannot be combined with directConnection: a plain host here.
        Scheme = MongoDB.Driver.Core.Configuration.ConnectionStringScheme.MongoDB,
        Server = new MongoServerAddress("127.0.0.1", port),
        DirectConnection = true,
    }.ToString();

    /// <summary>The service's connections to the primary now ($currentOp with idle connections, by the run's application name).</summary>
    public override async Task<int?> ReadConnectionsAsync(CancellationToken cancellationToken)
    {
        BsonDocument[] stages =
        [
            new("$currentOp", new BsonDocument { { "allUsers", true }, { "idleConnections", true }, { "idleSessions", false } }),
            new("$match", new BsonDocument("appName", ServiceApplication)),
            new("$count", "connections"),
        ];
        using var cursor = await _admin.GetDatabase("admin").AggregateAsync(
            new BsonDocumentStagePipelineDefinition<NoPipelineInput, BsonDocument>(stages), cancellationToken: cancellationToken);
        var counted = await cursor.FirstOrDefaultAsync(cancellationToken);
        return counted is null ? 0 : counted["connections"].ToInt32();
    }

    public override async ValueTask DisposeAsync()
    {
        try
        {
            if (!_keep && _database.Length > 0)
            {
                await _admin.DropDatabaseAsync(_database);
            }
        }
        finally
        {
            _admin.Dispose();
        }
    }

    private Task<BsonDocument> AdminCommandAsync(string command, CancellationToken cancellationToken) =>
        _admin.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument(command, 1), cancellationToken: cancellationToken);

    private Task<BsonDocument> ServerStatusAsync(CancellationToken cancellationToken) => AdminCommandAsync("serverStatus", cancellationToken);

    /// <summary>top's operation counts, each summed over the run's database's collections ("&lt;database&gt;.&lt;collection&gt;").</summary>
    private async Task<List<(string Counter, long Count)>> TopAsync(CancellationToken cancellationToken)
    {
        var top = await AdminCommandAsync("top", cancellationToken);
        var ours = top["totals"].AsBsonDocument.Where(n => n.Name.StartsWith(_database + ".", StringComparison.Ordinal)).Select(n => n.Value.AsBsonDocument).ToList();
        return [.. new[] { ("queries", "queries"), ("getmores", "getmore"), ("inserts", "insert"), ("updates", "update"), ("removes", "remove"), ("commands", "commands") }
            .Select(c => (c.Item1, ours.Sum(n => n.TryGetValue(c.Item2, out var e) ? e.AsBsonDocument["count"].ToInt64() : 0)))];
    }
}
