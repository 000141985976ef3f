using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Operators' lists and queries (<see cref="IOperatorQueries"/>): reads only, no transaction.</summary>
public sealed partial class MongoWorkflowStore : IOperatorQueries
{
    private static FilterDefinitionBuilder<InstanceDocument> InstanceFilter => Builders<InstanceDocument>.Filter;

    public async Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        if (query.Searches)
        {
            return await SearchInstancesAsync(query, cancellationToken).ConfigureAwait(false);
        }

        var filter = Filter(query);
        if (query.Status is { } status) filter &= InstanceFilter.Eq(i => i.Status, status.ToString());
        var total = await _instances.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (query.After is { } after)
        {
            // The documents after the position in the list's order (newest first, then id): the (tenant, status,
            // createdAt) and (tenant, definitionName, createdAt) indexes serve it. Ids compare as their bytes, the same
            // order the sort below uses.
            filter &= InstanceFilter.Lt(i => i.CreatedAt, after.CreatedAt)
                      | (InstanceFilter.Eq(i => i.CreatedAt, after.CreatedAt) & InstanceFilter.Gt(i => i.Id, after.Id));
        }

        var items = await _instances.Find(filter).SortByDescending(i => i.CreatedAt).ThenBy(i => i.Id).Skip(query.Offset).Limit(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<WorkflowInstance>(items.ConvertAll(i => i.ToModel()), (int)total, query.Offset, query.Limit);
    }

    public Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(CancellationToken cancellationToken) =>
        CountByStatusAsync(InstanceFilter.Empty, cancellationToken);

    public Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(InstanceQuery filter, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(filter);
        return CountByStatusAsync(Filter(filter), cancellationToken);
    }

    private async Task<IReadOnlyDictionary<InstanceStatus, long>> CountByStatusAsync(FilterDefinition<InstanceDocument> filter, CancellationToken cancellationToken)
    {
        var counts = await _instances.Aggregate().Match(filter)
            .Group(i => i.Status, g => new { Status = g.Key, Count = g.LongCount() })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return counts.ToDictionary(c => Enum.Parse<InstanceStatus>(c.Status), c => c.Count);
    }

    /// <summary>The query's tenant and filters, all but its status.</summary>
    private static FilterDefinition<InstanceDocument> Filter(InstanceQuery query)
    {
        var filter = InstanceFilter.Eq(i => i.Tenant, query.Tenant);
        if (query.DefinitionName is { } name) filter &= InstanceFilter.Eq(i => i.DefinitionName, name);
        if (query.DefinitionVersion is { } version) filter &= InstanceFilter.Eq(i => i.DefinitionVersion, version);
        // The partial indexes' fields are filtered with their type too, so that the planner may use those indexes.
        if (query.BusinessKey is { } businessKey) filter &= InstanceFilter.Eq(i => i.BusinessKey, businessKey) & InstanceFilter.Type(i => i.BusinessKey, BsonType.String);
        if (query.CreatedFrom is { } from) filter &= InstanceFilter.Gte(i => i.CreatedAt, from);
        if (query.CreatedTo is { } to) filter &= InstanceFilter.Lt(i => i.CreatedAt, to);
        if (query.ParentId is { } parent) filter &= InstanceFilter.Eq(i => i.ParentInstanceId, parent) & InstanceFilter.Type(i => i.ParentInstanceId, BsonType.Binary);
        return filter;
    }

    public async Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        var instanceId = instance.Id;
        var signals = await _signals.Find(s => s.InstanceId == instanceId).SortBy(s => s.CreatedAt).ThenBy(s => s.Id)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return signals.ConvertAll(s => s.ToModel());
    }

    public async Task<KeysetPage<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, SignalPosition? after, int limit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var signal = Builders<SignalDocument>.Filter;
        var filter = signal.Eq(s => s.InstanceId, instance.Id);
        var total = await _signals.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (after is { } position)
        {
            // The signals after the position in the ledger's order: createdAt >= at bounds the (instanceId, createdAt, _id)
            // index scan from the position on; the rest only sorts out the signals of that very instant.
            filter &= signal.Gte(s => s.CreatedAt, position.CreatedAt)
                      & (signal.Gt(s => s.CreatedAt, position.CreatedAt) | signal.Gt(s => s.Id, position.Id));
        }

        var items = await _signals.Find(filter).SortBy(s => s.CreatedAt).ThenBy(s => s.Id).Limit(limit + 1)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(items.ConvertAll(s => s.ToModel()), (int)total, limit);
    }

    /// <summary>The page of <paramref name="read"/>, up to limit + 1 items read: whether the last one is there says whether more follow.</summary>
    private static KeysetPage<T> Keyset<T>(List<T> read, int total, int limit) =>
        read.Count > limit ? new KeysetPage<T>(read[..limit], total, true) : new KeysetPage<T>(read, total, false);

    public Task<Page<SignalMessage>> ListDeadLettersAsync(string tenant, int offset, int limit, CancellationToken cancellationToken) =>
        QuerySignalsAsync(new SignalQuery(SignalStatus.DeadLettered, Offset: offset, Limit: limit, Tenant: tenant), cancellationToken);

    public async Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        var match = new BsonDocument();
        if (query.Status is { } status) match.Add("status", status.ToString());
        if (query.ClaimedBy is { } claimedBy) match.Add("leaseOwner", new BsonDocument { { "$eq", claimedBy }, { "$type", "string" } });
        if (query.Name is { } name) match.Add("name", name);

        // A signal is its instance's tenant's; one whose instance does not exist (it can only be dead-lettered) is the
        // default tenant's to see. Signals carry no tenant of their own, as in the relational store: the instance's is
        // looked up (its tenant only), and total and page come from one aggregation.
        var ofTenant = new BsonArray { new BsonDocument("owner.tenant", query.Tenant) };
        if (query.Tenant.Length == 0)
        {
            ofTenant.Add(new BsonDocument("owner", new BsonDocument("$size", 0)));
        }

        BsonDocument[] stages =
        [
            new("$match", match),
            new("$lookup", new BsonDocument
            {
                { "from", InstancesCollection },
                { "localField", "instanceId" },
                { "foreignField", "_id" },
                { "pipeline", new BsonArray { new BsonDocument("$project", new BsonDocument("tenant", 1)) } },
                { "as", "owner" },
            }),
            new("$match", new BsonDocument("$or", ofTenant)),
            new("$unset", "owner"),
            new("$facet", new BsonDocument
            {
                { "total", new BsonArray { new BsonDocument("$count", "n") } },
                {
                    "items", new BsonArray
                    {
                        new BsonDocument("$sort", new BsonDocument { { "createdAt", 1 }, { "_id", 1 } }),
                        new BsonDocument("$skip", Math.Max(0, query.Offset)),
                        // $limit must be positive; a page of none is cut below.
                        new BsonDocument("$limit", Math.Max(1, query.Limit)),
                    }
                },
            }),
        ];
        using var cursor = await _signals.AggregateAsync(new BsonDocumentStagePipelineDefinition<SignalDocument, BsonDocument>(stages),
            cancellationToken: cancellationToken).ConfigureAwait(false);
        var page = await cursor.FirstAsync(cancellationToken).ConfigureAwait(false);
        var totals = page["total"].AsBsonArray;
        var total = totals.Count == 0 ? 0 : totals[0]["n"].ToInt32();
        var items = page["items"].AsBsonArray.Take(Math.Max(0, query.Limit))
            .Select(d => BsonSerializer.Deserialize<SignalDocument>(d.AsBsonDocument).ToModel()).ToList();
        return new Page<SignalMessage>(items, total, query.Offset, query.Limit);
    }
}
