using System.Collections.Concurrent;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Search attributes (<see cref="ISearchAttributeStore"/>), as the relational stores keep them: typed slots, here fields
/// under the instance document's search (each indexed where present, step 8), and a tenant's names mapped to slots in
/// the searchAttributes collection.
/// </summary>
public sealed partial class MongoWorkflowStore : ISearchAttributeStore
{
    public const string SearchAttributesCollection = "searchAttributes";

    /// <summary>How many times a declaration is tried again after another node took a slot at the same moment.</summary>
    private const int DeclarationAttempts = 5;

    private readonly ConcurrentDictionary<string, IReadOnlyDictionary<string, DeclaredSearchAttribute>> _searchSlots = new(StringComparer.Ordinal);

    private IMongoCollection<BsonDocument> SearchAttributes => _database.GetCollection<BsonDocument>(SearchAttributesCollection);

    public async Task<SearchDeclarationProblem?> DeclareSearchAttributesAsync(string tenant, IReadOnlyList<(string Name, SearchValueType Type)> attributes,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(attributes);
        for (var attempt = 1; ; attempt++)
        {
            var declared = await ReadSearchAttributesAsync(tenant, cancellationToken).ConfigureAwait(false);
            var (added, problem) = SearchSlots.Assign(declared.Values.ToList(), attributes);
            if (problem is not null || added.Count == 0)
            {
                return problem;
            }

            try
            {
                await SearchAttributes.InsertManyAsync(added.Select(a => new BsonDocument
                {
                    ["tenant"] = tenant, ["name"] = a.Name, ["type"] = SearchTypeNames.Of(a.Type), ["slot"] = a.Slot,
                }), cancellationToken: cancellationToken).ConfigureAwait(false);
                return null;
            }
            catch (MongoException e) when (IsDuplicateKey(e) && attempt < DeclarationAttempts)
            {
                // Another node declared a name or took a slot meanwhile (the unique indexes): read again and retry. An
                // insert of several that stopped half-way left only rows this tenant now has, which the next read sees.
            }
        }
    }

    public async Task<IReadOnlyList<DeclaredSearchAttribute>> GetSearchAttributesAsync(string tenant, CancellationToken cancellationToken) =>
        (await ReadSearchAttributesAsync(tenant, cancellationToken).ConfigureAwait(false)).Values.OrderBy(a => a.Name, StringComparer.Ordinal).ToList();

    private async Task<IReadOnlyDictionary<string, DeclaredSearchAttribute>> ReadSearchAttributesAsync(string tenant, CancellationToken cancellationToken)
    {
        var rows = await SearchAttributes.Find(new BsonDocument("tenant", tenant)).ToListAsync(cancellationToken).ConfigureAwait(false);
        var declared = rows.Select(r => SearchTypeNames.TryParse(r["type"].AsString, out var type)
                ? new DeclaredSearchAttribute(r["name"].AsString, type, r["slot"].AsString)
                : null)
            .OfType<DeclaredSearchAttribute>().ToDictionary(a => a.Name, StringComparer.Ordinal);
        _searchSlots[tenant] = declared;
        return declared;
    }

    private async ValueTask<IReadOnlyDictionary<string, DeclaredSearchAttribute>> SearchSlotsAsync(string tenant, IEnumerable<string> names,
        CancellationToken cancellationToken) =>
        _searchSlots.TryGetValue(tenant, out var known) && names.All(known.ContainsKey)
            ? known
            : await ReadSearchAttributesAsync(tenant, cancellationToken).ConfigureAwait(false);

    public async Task<IReadOnlyList<SearchAttributeValue>> GetSearchValuesAsync(WorkflowInstance instance, IReadOnlyCollection<string> names,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentNullException.ThrowIfNull(names);
        var declared = await SearchSlotsAsync(instance.Tenant, names, cancellationToken).ConfigureAwait(false);
        var found = await _instances.Find(i => i.Id == instance.Id).Project(i => i.Search).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return SearchFields.Values(found, SearchSlots.Named(declared, names));
    }

    /// <summary>The search path of <see cref="QueryInstancesAsync"/>: the filter, the order and its keyset position; the total counted up to MaxCounted.</summary>
    private async Task<Page<WorkflowInstance>> SearchInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        var declared = await SearchSlotsAsync(query.Tenant, [], cancellationToken).ConfigureAwait(false);
        var fields = new SearchFields(declared);
        var order = query.Order ?? TenantSearchFields.NewestFirst;
        var filter = SearchFilter(query, fields, order);
        var total = await _instances.CountDocumentsAsync(filter, new CountOptions { Limit = query.MaxCounted }, cancellationToken).ConfigureAwait(false);
        // Newest first keeps the list's own order (then id ascending), for which its cursor was written.
        var newestFirst = query.Order is null or { Field.Name: "createdAt", Descending: true };
        if (query.After is { } after)
        {
            filter &= newestFirst
                ? InstanceFilter.Lt(i => i.CreatedAt, after.CreatedAt) | (InstanceFilter.Eq(i => i.CreatedAt, after.CreatedAt) & InstanceFilter.Gt(i => i.Id, after.Id))
                : fields.After(order, after);
        }

        var sort = newestFirst ? Builders<InstanceDocument>.Sort.Descending(i => i.CreatedAt).Ascending(i => i.Id) : fields.Sort(order);
        var items = await _instances.Find(filter).Sort(sort).Skip(query.Offset).Limit(query.Limit).ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<WorkflowInstance>(items.ConvertAll(d =>
        {
            var instance = d.ToModel();
            instance.SearchAttributes = SearchFields.Values(d.Search, declared.Values);
            return instance;
        }), (int)total, query.Offset, query.Limit);
    }

    private static FilterDefinition<InstanceDocument> SearchFilter(InstanceQuery query, SearchFields fields, SearchOrder order)
    {
        var filter = Filter(query);
        if (query.Status is { } status) filter &= InstanceFilter.Eq(i => i.Status, status.ToString());
        if (query.Filter is { } search) filter &= fields.Where(search);
        if (!order.Field.BuiltIn) filter &= InstanceFilter.Exists(fields.Element(order.Field));
        return filter;
    }

    public async Task<SearchValueCounts> CountBySearchValueAsync(InstanceQuery query, SearchField by, int top, int maxCounted,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        ArgumentNullException.ThrowIfNull(by);
        var declared = await SearchSlotsAsync(query.Tenant, [by.Name], cancellationToken).ConfigureAwait(false);
        var fields = new SearchFields(declared);
        var element = fields.Element(by);
        var filter = Filter(query) & InstanceFilter.Exists(element);
        if (query.Filter is { } search) filter &= fields.Where(search);
        var groups = await _instances.Aggregate().Match(filter).Limit(maxCounted)
            .Group(new BsonDocument { ["_id"] = "$" + element, ["count"] = new BsonDocument("$sum", 1) })
            .Sort(new BsonDocument { ["count"] = -1, ["_id"] = 1 })
            .Group(new BsonDocument
            {
                ["_id"] = BsonNull.Value,
                ["counted"] = new BsonDocument("$sum", "$count"),
                ["values"] = new BsonDocument("$push", new BsonDocument { ["value"] = "$_id", ["count"] = "$count" }),
            })
            .Project(new BsonDocument { ["counted"] = 1, ["values"] = new BsonDocument("$slice", new BsonArray { "$values", top }) })
            .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        if (groups is null)
        {
            return new SearchValueCounts([], true);
        }

        var values = groups["values"].AsBsonArray.Select(v => v.AsBsonDocument)
            .Select(v => (SearchFields.FromBson(by.Type, v["value"])!, v["count"].ToInt64())).ToList();
        return new SearchValueCounts(values, groups["counted"].ToInt64() < maxCounted);
    }

    /// <summary>Step 8: each slot indexed (tenant, slot, id) where present; a tenant's names and slots unique.</summary>
    private async Task CreateSearchIndexesAsync(CancellationToken cancellationToken)
    {
        await _instances.Indexes.CreateManyAsync(SearchSlots.All.Select(s => new CreateIndexModel<InstanceDocument>(
            new BsonDocument { ["tenant"] = 1, [$"search.{s.Slot}"] = 1, ["_id"] = 1 },
            new CreateIndexOptions<InstanceDocument>
            {
                Name = $"tenant_search_{s.Slot}",
                PartialFilterExpression = new BsonDocument($"search.{s.Slot}", new BsonDocument("$exists", true)),
            })), cancellationToken).ConfigureAwait(false);
        await SearchAttributes.Indexes.CreateManyAsync(
        [
            new(new BsonDocument { ["tenant"] = 1, ["name"] = 1 }, new CreateIndexOptions { Name = "tenant_name", Unique = true }),
            new(new BsonDocument { ["tenant"] = 1, ["slot"] = 1 }, new CreateIndexOptions { Name = "tenant_slot", Unique = true }),
        ], cancellationToken).ConfigureAwait(false);
    }
}
