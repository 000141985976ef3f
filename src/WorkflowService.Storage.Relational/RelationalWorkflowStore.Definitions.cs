using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Published definitions (<see cref="IDefinitionStore"/>), each query within one tenant.</summary>
public sealed partial class RelationalWorkflowStore : IDefinitionStore
{
    public async Task<DefinitionRecord> PublishDefinitionAsync(string tenant, string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            var latest = await db.Definitions.Where(d => d.Tenant == tenant && d.Name == name).MaxAsync(d => (int?)d.Version, cancellationToken).ConfigureAwait(false);
            var record = build((latest ?? 0) + 1);
            record.Tenant = tenant;
            db.Definitions.Add(record);
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                return record;
            }
            catch (DbUpdateException e) when (dialect.IsUniqueViolation(e) && attempt < 10)
            {
                // Another node published the same name concurrently: take the next number.
            }
        }
    }

    public async Task<DefinitionRecord?> GetDefinitionAsync(string tenant, string name, int? version, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var query = db.Definitions.AsNoTracking().Where(d => d.Tenant == tenant && d.Name == name);
        query = version is { } v ? query.Where(d => d.Version == v) : query.OrderByDescending(d => d.Version);
        return await query.FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(string tenant, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var rows = await db.Definitions.AsNoTracking().Where(d => d.Tenant == tenant)
            .Select(d => new { d.Name, d.Version, d.Description, d.CreatedAt })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return rows.GroupBy(r => r.Name)
            .Select(g => g.MaxBy(r => r.Version)!)
            .OrderBy(r => r.Name, StringComparer.Ordinal)
            .Select(r => new DefinitionSummary(r.Name, r.Version, r.Description, r.CreatedAt))
            .ToList();
    }

    public async Task<KeysetPage<DefinitionRecord>> ListDefinitionVersionsAsync(string tenant, string name, int? afterVersion, int limit,
        CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // The primary key (tenant, name, version) serves both the count and the seek.
        var q = db.Definitions.AsNoTracking().Where(d => d.Tenant == tenant && d.Name == name);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        if (afterVersion is { } after)
        {
            q = q.Where(d => d.Version > after);
        }

        var items = await q.OrderBy(d => d.Version).Take(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(items, total, limit);
    }
}
