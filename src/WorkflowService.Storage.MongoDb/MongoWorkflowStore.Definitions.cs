using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Published definitions (<see cref="IDefinitionStore"/>), each query within one tenant.</summary>
public sealed partial class MongoWorkflowStore : IDefinitionStore
{
    /// <summary>How many times a publish takes the next number after another node took the one it read.</summary>
    private const int PublishAttempts = 10;

    // No transaction: the unique index on (tenant, name, version) decides between two publishers; the loser reads the
    // latest version again and takes the next number.
    public async Task<DefinitionRecord> PublishDefinitionAsync(string tenant, string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(build);
        for (var attempt = 0; ; attempt++)
        {
            var latest = await _definitions.Find(d => d.Tenant == tenant && d.Name == name).SortByDescending(d => d.Version)
                .Project(d => new { d.Version }).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            var record = build((latest?.Version ?? 0) + 1);
            record.Tenant = tenant;
            try
            {
                await _definitions.InsertOneAsync(DefinitionDocument.From(record), cancellationToken: cancellationToken).ConfigureAwait(false);
                return record;
            }
            catch (MongoException e) when (IsDuplicateKey(e) && attempt < PublishAttempts)
            {
                // Another node published the same name concurrently: take the next number.
            }
        }
    }

    public async Task<DefinitionRecord?> GetDefinitionAsync(string tenant, string name, int? version, CancellationToken cancellationToken)
    {
        var query = version is { } v
            ? _definitions.Find(d => d.Tenant == tenant && d.Name == name && d.Version == v)
            : _definitions.Find(d => d.Tenant == tenant && d.Name == name).SortByDescending(d => d.Version);
        return (await query.FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false))?.ToModel();
    }

    public async Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(string tenant, CancellationToken cancellationToken)
    {
        // The versions' headers only (not their JSON), grouped here as the relational store does.
        var rows = await _definitions.Find(d => d.Tenant == tenant)
            .Project(d => new { d.Name, d.Version, d.Description, d.CreatedAt })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return rows.GroupBy(r => r.Name)
            .Select(g => g.MaxBy(r => r.Version)!)
            .OrderBy(r => r.Name, StringComparer.Ordinal)
            .Select(r => new DefinitionSummary(r.Name, r.Version, r.Description, InstanceDocument.Utc(r.CreatedAt)))
            .ToList();
    }

    public async Task<KeysetPage<DefinitionRecord>> ListDefinitionVersionsAsync(string tenant, string name, int? afterVersion, int limit,
        CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        // The unique (tenant, name, version) index serves both the count and the seek.
        var definition = Builders<DefinitionDocument>.Filter;
        var filter = definition.Eq(d => d.Tenant, tenant) & definition.Eq(d => d.Name, name);
        var total = await _definitions.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (afterVersion is { } after)
        {
            filter &= definition.Gt(d => d.Version, after);
        }

        var versions = await _definitions.Find(filter).SortBy(d => d.Version).Limit(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(versions.ConvertAll(d => d.ToModel()), (int)total, limit);
    }
}
