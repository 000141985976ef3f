using MongoDB.Bson;
using MongoDB.Driver;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The MongoDB store's collections read as plain BSON documents by their field names (those of the store's
/// Documents.cs), not through the store's own mapping classes: the checker reads what is stored. Reads are the primary's
/// (read concern local), as the store's are, so that a claim written with w:1 shows at once. The client is the backend's
/// (its pool); nothing is owned here.
/// </summary>
internal sealed class MongoStoreSnapshotReader(IMongoDatabase database) : StoreSnapshotReader
{
    private static readonly FilterDefinitionBuilder<BsonDocument> Filter = Builders<BsonDocument>.Filter;

    private readonly IMongoCollection<BsonDocument> _instances = database.GetCollection<BsonDocument>("instances");
    private readonly IMongoCollection<BsonDocument> _signals = database.GetCollection<BsonDocument>("signals");
    private readonly IMongoCollection<BsonDocument> _history = database.GetCollection<BsonDocument>("history");
    private readonly IMongoCollection<BsonDocument> _deliveries = database.GetCollection<BsonDocument>("deliveries");

    public override async Task<StoreSnapshot> ReadAsync(CancellationToken cancellationToken)
    {
        var instances = await _instances.Find(Filter.Empty).ToListAsync(cancellationToken);
        var signals = await _signals.Find(Filter.Empty).ToListAsync(cancellationToken);
        var history = await _history.Find(Filter.Empty).ToListAsync(cancellationToken);
        return new StoreSnapshot(
            instances.ConvertAll(i => new StoredInstance(Id(i["_id"]), i["status"].AsString, Text(i, "waitKind"), Text(i, "waitSignal"),
                i.GetValue("waitSignalId", BsonNull.Value).IsBsonNull ? null : Id(i["waitSignalId"]), i["version"].ToInt32(), i["historyLength"].ToInt32(),
                Text(i, "idempotencyKey"))),
            signals.ConvertAll(ReadSignal),
            history.ConvertAll(h => new StoredEvent(Id(h["instanceId"]), h["sequence"].ToInt32(), h["at"].ToUniversalTime(), h["type"].AsString,
                SignalIdOf(h["type"].AsString, Text(h, "data")))));
    }

    public override async Task<IReadOnlyDictionary<string, int>> CountByStatusAsync(CancellationToken cancellationToken)
    {
        BsonDocument[] stages = [new("$group", new BsonDocument { { "_id", "$status" }, { "count", new BsonDocument("$sum", 1) } })];
        using var cursor = await _instances.AggregateAsync(new BsonDocumentStagePipelineDefinition<BsonDocument, BsonDocument>(stages),
            cancellationToken: cancellationToken);
        var groups = await cursor.ToListAsync(cancellationToken);
        return groups.ToDictionary(g => g["_id"].AsString, g => g["count"].ToInt32());
    }

    public override async Task<int> CountSignalsAsync(string status, CancellationToken cancellationToken) =>
        (int)await _signals.CountDocumentsAsync(Filter.Eq("status", status), cancellationToken: cancellationToken);

    public override async Task<int> CountHandledByAsync(string owner, CancellationToken cancellationToken) =>
        (int)await _signals.CountDocumentsAsync(Filter.Eq("status", "Handled") & Filter.Eq("leaseOwner", owner), cancellationToken: cancellationToken);

    public override async Task<IReadOnlyList<Guid>> ClaimsHeldAsync(string node, CancellationToken cancellationToken)
    {
        // The store writes a released lease's leaseUntilMs as null, never leaves it out: Ne null is "leased".
        var held = await _signals.Find(Filter.Eq("status", "Pending") & Filter.Eq("leaseOwner", node) & Filter.Ne("leaseUntilMs", BsonNull.Value))
            .Project(new BsonDocument("_id", 1)).ToListAsync(cancellationToken);
        return held.ConvertAll(s => Id(s["_id"]));
    }

    public override async Task<IReadOnlyList<StoredSignal>> ReadSignalsAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken) =>
        ids.Count == 0 ? [] : (await _signals.Find(Filter.In("_id", ids.Select(Bson))).ToListAsync(cancellationToken)).ConvertAll(ReadSignal);

    public override async Task<IReadOnlyList<StoredDelivery>> ReadDeliveriesAsync(CancellationToken cancellationToken) =>
        (await _deliveries.Find(Filter.Empty).ToListAsync(cancellationToken)).ConvertAll(d =>
            new StoredDelivery(Id(d["_id"]), Id(d["instanceId"]), d["type"].AsString, d["status"].AsString, d["attempts"].ToInt32(), Text(d, "leaseOwner")));

    public override async Task<IReadOnlyList<Guid>> DeliveriesHeldAsync(string node, CancellationToken cancellationToken)
    {
        var held = await _deliveries.Find(Filter.Eq("status", "Pending") & Filter.Eq("leaseOwner", node) & Filter.Ne("leaseUntilMs", BsonNull.Value))
            .Project(new BsonDocument("_id", 1)).ToListAsync(cancellationToken);
        return held.ConvertAll(d => Id(d["_id"]));
    }

    public override async Task<IReadOnlyList<(long DueAtMs, DateTime At)>> ReadDueAndFiredAsync(string signalName, string eventType, string? stepId,
        CancellationToken cancellationToken)
    {
        // MongoDB has no join the store's collections are shaped for: both sides are read and paired by instance here, as
        // the relational reader's JOIN pairs them (every signal with every matching event of its instance).
        var signals = await _signals.Find(Filter.Eq("name", signalName)).Project(new BsonDocument { { "instanceId", 1 }, { "dueAtMs", 1 } })
            .ToListAsync(cancellationToken);
        var events = Filter.Eq("type", eventType) & (stepId is null ? Filter.Empty : Filter.Eq("stepId", stepId));
        var fired = (await _history.Find(events).Project(new BsonDocument { { "instanceId", 1 }, { "at", 1 } }).ToListAsync(cancellationToken))
            .ToLookup(h => Id(h["instanceId"]), h => h["at"].ToUniversalTime());
        return [.. signals.SelectMany(s => fired[Id(s["instanceId"])].Select(at => (s["dueAtMs"].ToInt64(), at)))];
    }

    public override async Task<IReadOnlyList<ScheduledStart>> ReadScheduledStartsAsync(CancellationToken cancellationToken) =>
        (await _instances.Find(Filter.Regex("idempotencyKey", new BsonRegularExpression("^" + ScheduledStart.KeyPrefix)))
            .Project(new BsonDocument { { "idempotencyKey", 1 }, { "createdAt", 1 } }).ToListAsync(cancellationToken))
        .ConvertAll(i => ScheduledStart.Parse(Id(i["_id"]), i["idempotencyKey"].AsString, i["createdAt"].ToUniversalTime()));

    public override async Task<IReadOnlyList<(Guid InstanceId, string Name, DateTime CreatedAt)>> ReadSignalArrivalsAsync(string namePrefix,
        CancellationToken cancellationToken) =>
        (await _signals.Find(Filter.Regex("name", new BsonRegularExpression("^" + System.Text.RegularExpressions.Regex.Escape(namePrefix))))
            .Project(new BsonDocument { { "instanceId", 1 }, { "name", 1 }, { "createdAt", 1 } }).ToListAsync(cancellationToken))
        .ConvertAll(s => (Id(s["instanceId"]), s["name"].AsString, s["createdAt"].ToUniversalTime()));

    public override async Task<IReadOnlyList<(Guid InstanceId, DateTime At, string? DataJson)>> ReadEventsAsync(string eventType,
        CancellationToken cancellationToken) =>
        (await _history.Find(Filter.Eq("type", eventType)).ToListAsync(cancellationToken))
        .ConvertAll(h => (Id(h["instanceId"]), h["at"].ToUniversalTime(), Text(h, "data")));

    public override ValueTask DisposeAsync() => ValueTask.CompletedTask;

    private static StoredSignal ReadSignal(BsonDocument s) =>
        new(Id(s["_id"]), Id(s["instanceId"]), s["name"].AsString, s["status"].AsString, Text(s, "idempotencyKey"), Text(s, "leaseOwner"),
            s["attempts"].ToInt32());

    /// <summary>The store's ids are standard UUIDs (binary subtype 4).</summary>
    private static Guid Id(BsonValue value) => value.AsBsonBinaryData.ToGuid(GuidRepresentation.Standard);

    private static BsonBinaryData Bson(Guid id) => new(id, GuidRepresentation.Standard);

    private static string? Text(BsonDocument document, string field) =>
        document.TryGetValue(field, out var value) && !value.IsBsonNull ? value.AsString : null;
}
