using System.Collections.Concurrent;
using System.Data.Common;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// Search attributes (<see cref="ISearchAttributeStore"/>) and the search path of the instance list: typed slot columns
/// on wf_instances, a tenant's names mapped to slots in wf_search_attributes (schema 16).
/// </summary>
public sealed partial class RelationalWorkflowStore : ISearchAttributeStore
{
    /// <summary>How many times a declaration is tried again after another node took a slot at the same moment.</summary>
    private const int DeclarationAttempts = 5;

    /// <summary>Each tenant's attributes by name, as last read. A name never changes its slot, so an entry never goes stale; a missing name reads again.</summary>
    private readonly ConcurrentDictionary<string, IReadOnlyDictionary<string, DeclaredSearchAttribute>> _searchSlots = new(StringComparer.Ordinal);

    /// <summary>Slots this node knows have their index.</summary>
    private readonly ConcurrentDictionary<string, byte> _indexedSlots = new(StringComparer.Ordinal);

    /// <summary>One index build at a time on this node.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA2213:Disposable fields should be disposed",
        Justification = "A build may outlive the store's disposal (it ignores the request's cancellation) and releases it then; no wait handle is ever made.")]
    private readonly SemaphoreSlim _indexBuilds = new(1, 1);

    public async Task<SearchDeclarationProblem?> DeclareSearchAttributesAsync(string tenant, IReadOnlyList<(string Name, SearchValueType Type)> attributes,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(attributes);
        for (var attempt = 1; ; attempt++)
        {
            var declared = await ReadSearchAttributesAsync(tenant, cancellationToken).ConfigureAwait(false);
            var (added, problem) = SearchSlots.Assign(declared.Values.ToList(), attributes);
            if (problem is not null)
            {
                return problem;
            }

            // A slot's index is built before an attribute takes the slot (and again here when an earlier build failed),
            // by a node that may change the schema; where only `migrate` may, it builds them (docs/upgrades.md).
            if (migrator.ApplyAtStartup)
            {
                var named = SearchSlots.Named(declared, attributes.Select(a => a.Name));
                await EnsureSlotIndexesAsync(added.Concat(named).Select(a => a.Slot), cancellationToken).ConfigureAwait(false);
            }

            if (added.Count == 0)
            {
                return null;
            }

            using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            db.SearchAttributes.AddRange(added.Select(a => new SearchAttributeRow
            {
                Tenant = tenant, Name = a.Name, Type = SearchTypeNames.Of(a.Type), Slot = a.Slot,
            }));
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                return null;
            }
            catch (DbUpdateException e) when (dialect.IsUniqueViolation(e) && attempt < DeclarationAttempts)
            {
                // Another node declared a name or took a slot meanwhile: read the tenant's attributes again and retry.
            }
        }
    }

    /// <summary>
    /// Builds the index of each of <paramref name="slots"/> this node has not seen indexed yet (schema 17: only slots in use
    /// have one, so instance writes pay for no other). One build at a time on this node, and one per index across nodes
    /// (the dialect's lock). A build is not the request's to stop: it runs to its own bound (Store:MigrationTimeout), since
    /// a build stopped half-way leaves an index to drop and build again. A build that fails is logged, not thrown: the
    /// attribute works without its index, only slower, and GET /admin/schema lists the index as missing.
    /// </summary>
    private async Task EnsureSlotIndexesAsync(IEnumerable<string> slots, CancellationToken cancellationToken)
    {
        var missing = slots.Where(s => !_indexedSlots.ContainsKey(s)).Distinct(StringComparer.Ordinal).ToList();
        if (missing.Count == 0)
        {
            return;
        }

        if (!await _indexBuilds.WaitAsync(migrator.Timeout, cancellationToken).ConfigureAwait(false))
        {
            migrator.IndexBuildsWaited(missing.Select(SlotIndexes.Name));
            return;
        }

        try
        {
            await using var db = await contexts.CreateDbContextAsync(CancellationToken.None).ConfigureAwait(false);
            try
            {
                await db.Database.OpenConnectionAsync(CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (e is System.Data.Common.DbException or TimeoutException or InvalidOperationException)
            {
                foreach (var slot in missing)
                {
                    migrator.IndexBuildFailed(SlotIndexes.Name(slot), e);
                }

                return;
            }

            foreach (var slot in missing.Where(s => !_indexedSlots.ContainsKey(s)))
            {
                // Its own bound, whatever the request does: the SQLite write lane's wait too.
                using var bound = new CancellationTokenSource(migrator.Timeout);
                try
                {
                    if (await dialect.EnsureIndexAsync(db.Database.GetDbConnection(), SlotIndexes.Name(slot), SlotIndexes.Definition(slot),
                            migrator.Timeout, bound.Token).ConfigureAwait(false))
                    {
                        _indexedSlots[slot] = 0;
                    }
                }
                catch (Exception e) when (e is System.Data.Common.DbException or TimeoutException or InvalidOperationException
                                              or OperationCanceledException)
                {
                    migrator.IndexBuildFailed(SlotIndexes.Name(slot), e);
                }
            }
        }
        finally
        {
            _indexBuilds.Release();
        }
    }

    /// <summary>The indexes of slots in use that are missing or cannot serve queries (a build failed or is under way).</summary>
    internal async Task<IReadOnlyList<string>> MissingSlotIndexesAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var slots = await db.SearchAttributes.AsNoTracking().Select(a => a.Slot).Distinct().ToListAsync(cancellationToken).ConfigureAwait(false);
        if (slots.Count == 0)
        {
            return [];
        }

        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        var names = slots.Select(SlotIndexes.Name).Order(StringComparer.Ordinal).ToList();
        var valid = await dialect.ValidIndexesAsync(db.Database.GetDbConnection(), names, cancellationToken).ConfigureAwait(false);
        return names.Where(n => !valid.Contains(n)).ToList();
    }

    /// <summary>
    /// Every slot any tenant uses has its index (after an upgrade from schema 16, a build that failed, or attributes
    /// declared by nodes that may not change the schema): at start-up where the node migrates, and on every `migrate`.
    /// </summary>
    private async Task EnsureSlotIndexesInUseAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var slots = await db.SearchAttributes.AsNoTracking().Select(a => a.Slot).Distinct().ToListAsync(cancellationToken).ConfigureAwait(false);
        // Asked of the database again, whatever this node saw before (an index may have been dropped since).
        foreach (var slot in slots)
        {
            _indexedSlots.TryRemove(slot, out _);
        }

        await EnsureSlotIndexesAsync(slots, cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<DeclaredSearchAttribute>> GetSearchAttributesAsync(string tenant, CancellationToken cancellationToken) =>
        (await ReadSearchAttributesAsync(tenant, cancellationToken).ConfigureAwait(false)).Values.OrderBy(a => a.Name, StringComparer.Ordinal).ToList();

    /// <summary>The tenant's attributes read from the database (and cached).</summary>
    private async Task<IReadOnlyDictionary<string, DeclaredSearchAttribute>> ReadSearchAttributesAsync(string tenant, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.SearchAttributes.AsNoTracking().Where(a => a.Tenant == tenant).ToListAsync(cancellationToken).ConfigureAwait(false);
        var declared = rows.Select(r => SearchTypeNames.TryParse(r.Type, out var type) ? new DeclaredSearchAttribute(r.Name, type, r.Slot) : null)
            .OfType<DeclaredSearchAttribute>().ToDictionary(a => a.Name, StringComparer.Ordinal);
        _searchSlots[tenant] = declared;
        return declared;
    }

    /// <summary>The tenant's attributes, from the cache when it knows every name in <paramref name="names"/>.</summary>
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
        var attributes = SearchSlots.Named(declared, names).OrderBy(a => a.Name, StringComparer.Ordinal).ToList();
        if (attributes.Count == 0)
        {
            return [];
        }

        var statement = new SqlStatement(dialect).Sql($"SELECT {string.Join(", ", attributes.Select(a => a.Slot))} FROM wf_instances WHERE id = ")
            .Param(instance.Id);
        return await ReadAsync(statement, async (reader, ct) =>
        {
            var values = new List<SearchAttributeValue>();
            if (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                for (var i = 0; i < attributes.Count; i++)
                {
                    if (SearchColumn.Read(reader, i, attributes[i].Type) is { } value)
                    {
                        values.Add(new SearchAttributeValue(attributes[i].Name, attributes[i].Type, value));
                    }
                }
            }

            return values;
        }, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The search path of <see cref="QueryInstancesAsync"/>: one statement for the page (the instance columns and the
    /// tenant's slots, so each item carries its values) and one for the total, which counts no further than the query's
    /// MaxCounted (counting every match reads every matching row).
    /// </summary>
    private async Task<Page<WorkflowInstance>> SearchInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        var declared = await SearchSlotsAsync(query.Tenant, FieldNames(query), cancellationToken).ConfigureAwait(false);
        var sql = new SearchSql(dialect, declared);
        var attributes = declared.Values.OrderBy(a => a.Name, StringComparer.Ordinal).ToList();

        var count = sql.From(new SqlStatement(dialect).Sql("SELECT COUNT(*) FROM (SELECT 1 AS one"), query, seek: false)
            .Sql(" LIMIT ").Param(query.MaxCounted).Sql(") AS matched");
        var total = await ReadAsync(count, static async (reader, ct) =>
            await reader.ReadAsync(ct).ConfigureAwait(false) ? Convert.ToInt32(reader.GetValue(0), System.Globalization.CultureInfo.InvariantCulture) : 0,
            cancellationToken).ConfigureAwait(false);

        var select = new SqlStatement(dialect).Sql("SELECT ").Sql(Rows.InstanceColumns);
        foreach (var attribute in attributes)
        {
            select.Sql(", ").Sql(attribute.Slot);
        }

        sql.OrderBy(sql.From(select, query, seek: true), query.Order).Sql(" LIMIT ").Param(query.Limit).Sql(" OFFSET ").Param(query.Offset);
        var items = await ReadAsync(select, async (reader, ct) =>
        {
            var found = new List<WorkflowInstance>();
            while (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                var instance = Rows.ReadInstance(reader);
                instance.SearchAttributes = ReadValues(reader, Rows.InstanceColumnNames.Length, attributes);
                found.Add(instance);
            }

            return found;
        }, cancellationToken).ConfigureAwait(false);
        return new Page<WorkflowInstance>(items, total, query.Offset, query.Limit);
    }

    public async Task<SearchValueCounts> CountBySearchValueAsync(InstanceQuery query, SearchField by, int top, int maxCounted,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        ArgumentNullException.ThrowIfNull(by);
        var declared = await SearchSlotsAsync(query.Tenant, [.. FieldNames(query), by.Name], cancellationToken).ConfigureAwait(false);
        var sql = new SearchSql(dialect, declared);
        var column = sql.Column(by);
        // The matching instances that have a value, at most maxCounted of them, grouped; the window sums every group's count.
        var statement = sql.From(new SqlStatement(dialect).Sql($"SELECT v, COUNT(*), SUM(COUNT(*)) OVER () FROM (SELECT {column} AS v"),
                query with { After = null, Order = null }, seek: false)
            .Sql($" AND {column} IS NOT NULL LIMIT ").Param(maxCounted).Sql(") AS matched GROUP BY v ORDER BY COUNT(*) DESC, v LIMIT ").Param(top);
        return await ReadAsync(statement, async (reader, ct) =>
        {
            var values = new List<(object, long)>();
            long counted = 0;
            while (await reader.ReadAsync(ct).ConfigureAwait(false))
            {
                values.Add((SearchColumn.Read(reader, 0, by.Type)!, reader.GetInt64(1)));
                counted = Convert.ToInt64(reader.GetValue(2), System.Globalization.CultureInfo.InvariantCulture);
            }

            return new SearchValueCounts(values, counted < maxCounted);
        }, cancellationToken).ConfigureAwait(false);
    }

    private static List<SearchAttributeValue> ReadValues(DbDataReader reader, int at, List<DeclaredSearchAttribute> attributes)
    {
        var values = new List<SearchAttributeValue>(attributes.Count);
        for (var i = 0; i < attributes.Count; i++)
        {
            if (SearchColumn.Read(reader, at + i, attributes[i].Type) is { } value)
            {
                values.Add(new SearchAttributeValue(attributes[i].Name, attributes[i].Type, value));
            }
        }

        return values;
    }

    /// <summary>The attribute names a query's filter and order name (to know whether the cached slots cover them).</summary>
    private static List<string> FieldNames(InstanceQuery query)
    {
        var names = new List<string>();
        Collect(query.Filter, names);
        if (query.Order is { Field.BuiltIn: false } order)
        {
            names.Add(order.Field.Name);
        }

        return names;

        static void Collect(SearchFilter? filter, List<string> names)
        {
            switch (filter)
            {
                case AndFilter and: and.Items.ToList().ForEach(f => Collect(f, names)); break;
                case OrFilter or: or.Items.ToList().ForEach(f => Collect(f, names)); break;
                case NotFilter not: Collect(not.Inner, names); break;
                case ComparisonFilter { Field.BuiltIn: false } c: names.Add(c.Field.Name); break;
                case InFilter { Field.BuiltIn: false } i: names.Add(i.Field.Name); break;
                case PrefixFilter { Field.BuiltIn: false } p: names.Add(p.Field.Name); break;
            }
        }
    }
}
