using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// The schema (<see cref="IStoreSchema"/>): MongoDB has no table definitions, but the store still has a shape to keep in
/// step across releases: its collections, the indexes the claim, the unique keys and the queries need, and the schema
/// document that says which releases may run on the database (as the relational stores' version row).
/// </summary>
public sealed partial class MongoWorkflowStore : IStoreSchema
{
    public const string StoreName = "mongodb";

    /// <summary>The schema this build is written for.</summary>
    public const int NodeSchema = 2;

    /// <summary>The oldest MongoDB this store runs on: 5.0 (wire version 13), for $lookup with both a local field and a pipeline.</summary>
    private const int MinWireVersion = 13;

    /// <summary>The steps of the store's schema, oldest first; each creates what it needs idempotently.</summary>
    private static readonly SchemaStep[] Steps =
    [
        new(1, "Collections (instances, signals, history, tasks, definitions, leases, schema) and their indexes", 1, null),
        new(2, "Signal ledger index: an instance's signals in their order, for paged reads", 1, null),
        new(3, "Event subscriptions: a tenant's names unique", 1, null),
        new(4, "Event deliveries: the outbox's claim, order and log indexes", 1, null),
        new(5, "Delivery retention indexes: by instance, and delivered ones by time", 1, null),
        new(6, "Business keys unique among open instances only", 1, null),
        new(7, "Schedules: a tenant's names unique, claimed by due time", 1, null),
        new(8, "Search attributes: typed slot fields of instances, each indexed where present; names per tenant", 1, null),
    ];

    /// <summary>The named lease a migrating node holds, so that one node at a time applies steps.</summary>
    private const string SchemaLease = "schema-migration";

    private static readonly TimeSpan SchemaLeasePoll = TimeSpan.FromMilliseconds(250);

    /// <summary>This store's name as the owner of the schema lease.</summary>
    private readonly string _schemaOwner = $"schema-{Guid.NewGuid():N}";

    public async Task InitializeAsync(CancellationToken cancellationToken)
    {
        await CheckServerAsync(cancellationToken).ConfigureAwait(false);
        var status = _options.ApplyMigrationsAtStartup
            ? await MigrateAsync(cancellationToken).ConfigureAwait(false)
            : await GetSchemaStatusAsync(cancellationToken).ConfigureAwait(false);
        CheckNodeSupported(status);
        await MeasureClockAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Refuses a server this store cannot run on, with what to do about it: a standalone mongod (no transactions, no
    /// change streams) or one older than 5.0.
    /// </summary>
    private async Task CheckServerAsync(CancellationToken cancellationToken)
    {
        var hello = await HelloAsync(cancellationToken).ConfigureAwait(false);
        var replicaSet = hello.Contains("setName");
        var router = hello.TryGetValue("msg", out var msg) && msg.IsString && msg.AsString == "isdbgrid";
        if (!replicaSet && !router)
        {
            throw new StoreSchemaException(
                "Store:Provider MongoDb needs a replica set (or a sharded cluster): its wait points are multi-document transactions "
                + "and its wake-ups a change stream, and a standalone mongod has neither. Start mongod with --replSet and run "
                + "rs.initiate() once (a single member is enough; compose/mongodb does both), and name the set in "
                + "Store:ConnectionString (?replicaSet=...).");
        }

        if (hello.TryGetValue("maxWireVersion", out var wire) && wire.IsNumeric && wire.ToInt32() < MinWireVersion)
        {
            throw new StoreSchemaException(
                $"Store:Provider MongoDb needs MongoDB 5.0 or newer (wire version {MinWireVersion}); the server answers wire version {wire.ToInt32()}.");
        }
    }

    private Task<BsonDocument> HelloAsync(CancellationToken cancellationToken) =>
        _client.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument("hello", 1), cancellationToken: cancellationToken);

    /// <summary>The primary's clock against this node's, read from hello's localTime.</summary>
    private Task MeasureClockAsync(CancellationToken cancellationToken) =>
        _clock.MeasureAsync(async ct =>
        {
            var hello = await HelloAsync(ct).ConfigureAwait(false);
            return hello.TryGetValue("localTime", out var localTime) && localTime.IsValidDateTime
                ? localTime.AsBsonDateTime.MillisecondsSinceEpoch
                : null;
        }, cancellationToken);

    public async Task<SchemaStatus> GetSchemaStatusAsync(CancellationToken cancellationToken)
    {
        var document = await _schema.Find(s => s.Id == SchemaDocument.Key).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return Status(document);
    }

    private static SchemaStatus Status(SchemaDocument? document)
    {
        var applied = document?.Steps.OrderBy(s => s.Version)
            .Select(s => new SchemaStep(s.Version, s.Description, s.OldestCompatible, InstanceDocument.Utc(s.AppliedAt))).ToList() ?? [];
        var newest = document?.Newest;
        var pending = Steps.Where(s => newest is not { } n || s.Version > n).ToList();
        return new SchemaStatus(StoreName, NodeSchema, document?.OldestSupported, newest, applied, pending);
    }

    /// <summary>
    /// Applies the pending steps under the schema lease. The collections are created first, explicitly and outside any
    /// transaction: a collection created implicitly by the first insert inside a transaction makes concurrent first
    /// transactions fail (the predecessor's MongoDB finding), and creating them here is safe on many nodes at once.
    /// </summary>
    public async Task<SchemaStatus> MigrateAsync(CancellationToken cancellationToken)
    {
        await CheckServerAsync(cancellationToken).ConfigureAwait(false);
        await CreateCollectionsAsync(cancellationToken).ConfigureAwait(false);
        await TakeSchemaLeaseAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var status = await GetSchemaStatusAsync(cancellationToken).ConfigureAwait(false);
            if (status.Pending.Count == 0)
            {
                return status;
            }

            // Every step so far only adds indexes (step 2: the signal ledger's; step 3: subscription names), all created here, and step 6
            // fills openBusinessKey and drops the old unique key index first (OpenBusinessKeysAsync). createIndexes is idempotent
            // for an index that exists with the same keys and options, so a step interrupted half-way is simply applied again.
            await CreateIndexesAsync(cancellationToken).ConfigureAwait(false);
            var appliedAt = Now().UtcDateTime;
            var update = Builders<SchemaDocument>.Update
                .Set(s => s.Newest, Steps[^1].Version)
                .Set(s => s.OldestSupported, Steps[^1].OldestCompatible);
            update = update.PushEach(s => s.Steps, status.Pending.Select(step => new SchemaStepDocument
            {
                Version = step.Version, Description = step.Description, OldestCompatible = step.OldestCompatible, AppliedAt = appliedAt,
            }));

            // A single document: the schema version changes atomically, after every index it promises exists.
            await _schema.UpdateOneAsync(s => s.Id == SchemaDocument.Key, update, new UpdateOptions { IsUpsert = true }, cancellationToken)
                .ConfigureAwait(false);
            return await GetSchemaStatusAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await ReleaseLeaseAsync(SchemaLease, _schemaOwner, CancellationToken.None).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Step 6: open instances carry their business key in openBusinessKey as well (set before its unique index exists),
    /// and the key's index over every instance is no longer unique (dropped here, made again by its new name).
    /// Idempotent, so a step interrupted half-way is applied again.
    /// </summary>
    private async Task OpenBusinessKeysAsync(CancellationToken cancellationToken)
    {
        var filter = Builders<InstanceDocument>.Filter;
        await _instances.UpdateManyAsync(
            filter.Type(i => i.BusinessKey, BsonType.String) & filter.Eq(i => i.CompletedAt, null) & filter.Not(filter.Type(i => i.OpenBusinessKey, BsonType.String)),
            new PipelineUpdateDefinition<InstanceDocument>(new BsonDocument[] { new("$set", new BsonDocument("openBusinessKey", "$businessKey")) }),
            cancellationToken: cancellationToken).ConfigureAwait(false);
        try
        {
            await _instances.Indexes.DropOneAsync("tenant_definition_businessKey", cancellationToken).ConfigureAwait(false);
        }
        catch (MongoCommandException e) when (e.CodeName == "IndexNotFound")
        {
            // A database made by this step's build, or the step applied before.
        }
    }

    private async Task CreateCollectionsAsync(CancellationToken cancellationToken)
    {
        using var existing = await _database.ListCollectionNamesAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        var names = (await existing.ToListAsync(cancellationToken).ConfigureAwait(false)).ToHashSet(StringComparer.Ordinal);
        foreach (var name in Collections.Where(c => !names.Contains(c)))
        {
            try
            {
                await _database.CreateCollectionAsync(name, cancellationToken: cancellationToken).ConfigureAwait(false);
            }
            catch (MongoCommandException e) when (e.CodeName == "NamespaceExists")
            {
                // Another node created it meanwhile.
            }
        }
    }

    /// <summary>Waits at most Store:MigrationTimeout for another node's migration to end.</summary>
    private async Task TakeSchemaLeaseAsync(CancellationToken cancellationToken)
    {
        var started = _time.GetTimestamp();
        while (!await TryTakeLeaseAsync(SchemaLease, _schemaOwner, _options.MigrationTimeout, cancellationToken).ConfigureAwait(false))
        {
            if (_time.GetElapsedTime(started) >= _options.MigrationTimeout)
            {
                throw new StoreSchemaException(
                    $"Another node has held the {StoreName} schema lease (a migration) for longer than Store:MigrationTimeout "
                    + $"({_options.MigrationTimeout}); wait for it to end, or raise the timeout.");
            }

            await Task.Delay(SchemaLeasePoll, _time, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The indexes of schema steps 1 and 2, by name (so that an operator can tell them from their own).</summary>
    private async Task CreateIndexesAsync(CancellationToken cancellationToken)
    {
        var instanceKeys = Builders<InstanceDocument>.IndexKeys;
        var instanceFilter = Builders<InstanceDocument>.Filter;
        await OpenBusinessKeysAsync(cancellationToken).ConfigureAwait(false);
        await _instances.Indexes.CreateManyAsync(
        [
            // Idempotent starts: a repeated key is a DuplicateInstanceException. Partial: most instances have none.
            new(instanceKeys.Ascending(i => i.Tenant).Ascending(i => i.IdempotencyKey), new CreateIndexOptions<InstanceDocument>
            {
                Name = "tenant_idempotencyKey", Unique = true, PartialFilterExpression = instanceFilter.Type(i => i.IdempotencyKey, BsonType.String),
            }),
            // A business key names one open instance of a definition (step 6); ended ones keep theirs, which may repeat.
            new(instanceKeys.Ascending(i => i.Tenant).Ascending(i => i.DefinitionName).Ascending(i => i.OpenBusinessKey), new CreateIndexOptions<InstanceDocument>
            {
                Name = "tenant_definition_openBusinessKey", Unique = true, PartialFilterExpression = instanceFilter.Type(i => i.OpenBusinessKey, BsonType.String),
            }),
            // The list's business key filter, and an ended instance read by its key.
            new(instanceKeys.Ascending(i => i.Tenant).Ascending(i => i.DefinitionName).Ascending(i => i.BusinessKey), new CreateIndexOptions<InstanceDocument>
            {
                Name = "tenant_definition_businessKeys", PartialFilterExpression = instanceFilter.Type(i => i.BusinessKey, BsonType.String),
            }),
            // The operators' lists, newest first, by status or by definition.
            new(instanceKeys.Ascending(i => i.Tenant).Ascending(i => i.Status).Descending(i => i.CreatedAt),
                new CreateIndexOptions { Name = "tenant_status_createdAt" }),
            new(instanceKeys.Ascending(i => i.Tenant).Ascending(i => i.DefinitionName).Descending(i => i.CreatedAt),
                new CreateIndexOptions { Name = "tenant_definition_createdAt" }),
            // Retention: ended instances only (open ones have no completedAt).
            new(instanceKeys.Ascending(i => i.CompletedAt), new CreateIndexOptions<InstanceDocument>
            {
                Name = "completedAt", PartialFilterExpression = instanceFilter.Type(i => i.CompletedAt, BsonType.DateTime),
            }),
            // A parent's children.
            new(instanceKeys.Ascending(i => i.ParentInstanceId), new CreateIndexOptions<InstanceDocument>
            {
                Name = "parentInstanceId", PartialFilterExpression = instanceFilter.Type(i => i.ParentInstanceId, BsonType.Binary),
            }),
        ], cancellationToken).ConfigureAwait(false);

        await CreateSearchIndexesAsync(cancellationToken).ConfigureAwait(false);
        var signalKeys = Builders<SignalDocument>.IndexKeys;
        await _signals.Indexes.CreateManyAsync(
        [
            // The claim: pending signals by due time.
            new(signalKeys.Ascending(s => s.Status).Ascending(s => s.DueAtMs), new CreateIndexOptions { Name = "status_dueAtMs" }),
            // An instance's signals: parked ones, CloseOpenWork, RequeueParked, the operators' list.
            new(signalKeys.Ascending(s => s.InstanceId).Ascending(s => s.Status), new CreateIndexOptions { Name = "instanceId_status" }),
            // Step 2: an instance's ledger in its order, paged by position (GET /instances/{id}/signals).
            new(signalKeys.Ascending(s => s.InstanceId).Ascending(s => s.CreatedAt).Ascending(s => s.Id), new CreateIndexOptions { Name = "instanceId_createdAt_id" }),
            new(signalKeys.Ascending(s => s.InstanceId).Ascending(s => s.IdempotencyKey), new CreateIndexOptions<SignalDocument>
            {
                Name = "instanceId_idempotencyKey", Unique = true,
                PartialFilterExpression = Builders<SignalDocument>.Filter.Type(s => s.IdempotencyKey, BsonType.String),
            }),
            // The claims a node holds (shutdown's release, the operators' view).
            new(signalKeys.Ascending(s => s.LeaseOwner), new CreateIndexOptions<SignalDocument>
            {
                Name = "leaseOwner", PartialFilterExpression = Builders<SignalDocument>.Filter.Type(s => s.LeaseOwner, BsonType.String),
            }),
        ], cancellationToken).ConfigureAwait(false);

        // History in order, and the unique (instance, sequence) that turns a stale writer's append into a conflict.
        await _history.Indexes.CreateOneAsync(new CreateIndexModel<HistoryDocument>(
            Builders<HistoryDocument>.IndexKeys.Ascending(h => h.InstanceId).Ascending(h => h.Sequence),
            new CreateIndexOptions { Name = "instanceId_sequence", Unique = true }), cancellationToken: cancellationToken).ConfigureAwait(false);

        var taskKeys = Builders<TaskDocument>.IndexKeys;
        await _tasks.Indexes.CreateManyAsync(
        [
            new(taskKeys.Ascending(t => t.Tenant).Ascending(t => t.Status).Ascending(t => t.Assignee), new CreateIndexOptions { Name = "tenant_status_assignee" }),
            new(taskKeys.Ascending(t => t.Tenant).Ascending(t => t.Status).Ascending(t => t.Role), new CreateIndexOptions { Name = "tenant_status_role" }),
            new(taskKeys.Ascending(t => t.InstanceId), new CreateIndexOptions { Name = "instanceId" }),
        ], cancellationToken).ConfigureAwait(false);

        // Version numbers per tenant and name: two publishers of the same number collide here.
        await _definitions.Indexes.CreateOneAsync(new CreateIndexModel<DefinitionDocument>(
            Builders<DefinitionDocument>.IndexKeys.Ascending(d => d.Tenant).Ascending(d => d.Name).Ascending(d => d.Version),
            new CreateIndexOptions { Name = "tenant_name_version", Unique = true }), cancellationToken: cancellationToken).ConfigureAwait(false);

        // Step 3: a tenant's subscription names are unique; the index also serves the list by name.
        await _subscriptions.Indexes.CreateOneAsync(new CreateIndexModel<SubscriptionDocument>(
            Builders<SubscriptionDocument>.IndexKeys.Ascending(s => s.Tenant).Ascending(s => s.Name),
            new CreateIndexOptions { Name = "tenant_name", Unique = true }), cancellationToken: cancellationToken).ConfigureAwait(false);

        // Step 4: the outbox's claim (pending by due time), its order check (an instance's pending deliveries per
        // subscription) and the delivery log (a subscription's, newest first).
        var deliveryKeys = Builders<DeliveryDocument>.IndexKeys;
        await _deliveries.Indexes.CreateManyAsync(
        [
            new(deliveryKeys.Ascending(d => d.Status).Ascending(d => d.DueAtMs), new CreateIndexOptions { Name = "status_dueAtMs" }),
            new(deliveryKeys.Ascending(d => d.SubscriptionId).Ascending(d => d.InstanceId).Ascending(d => d.Sequence),
                new CreateIndexOptions { Name = "subscriptionId_instanceId_sequence" }),
            new(deliveryKeys.Ascending(d => d.SubscriptionId).Descending(d => d.Sequence), new CreateIndexOptions { Name = "subscriptionId_sequence" }),
            // Step 5: retention deletes an instance's deliveries with it, and delivered ones by their delivery time.
            new(deliveryKeys.Ascending(d => d.InstanceId), new CreateIndexOptions { Name = "instanceId" }),
            new(deliveryKeys.Ascending(d => d.Status).Ascending(d => d.DeliveredAt), new CreateIndexOptions { Name = "status_deliveredAt" }),
        ], cancellationToken).ConfigureAwait(false);
        await CreateScheduleIndexesAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Refuses a node whose release does not fit the database's schema, in the relational stores' words.</summary>
    private void CheckNodeSupported(SchemaStatus status)
    {
        if (status.RefusalReason(_options.ApplyMigrationsAtStartup, "schema document") is { } refused)
        {
            throw new StoreSchemaException(refused);
        }
    }
}
