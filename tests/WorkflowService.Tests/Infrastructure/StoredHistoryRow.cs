using Microsoft.EntityFrameworkCore;
using WorkflowService.Storage.Relational;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// A wf_history row of a relational store as it sits in the table (not expanded into events): its first sequence, and
/// the JSON of the events after it (null for a single-event row).
/// </summary>
public sealed record StoredHistoryRow(int Sequence, string? MoreJson)
{
    /// <summary>The instance's history rows in order, read through the service's own context factory.</summary>
    public static async Task<IReadOnlyList<StoredHistoryRow>> ReadAsync(IDbContextFactory<WorkflowDbContext> contexts, Guid instanceId)
    {
        await using var db = await contexts.CreateDbContextAsync(TestContext.Current.CancellationToken);
        return await ReadAsync(db, instanceId);
    }

    /// <summary>
    /// The instance's history rows in order, on the database of <paramref name="settings"/> (a service's Store: settings),
    /// for a service running in another process.
    /// </summary>
    public static async Task<IReadOnlyList<StoredHistoryRow>> ReadAsync(IReadOnlyDictionary<string, string?> settings, Guid instanceId)
    {
        var options = new DbContextOptionsBuilder<WorkflowDbContext>();
        var connectionString = settings["Store:ConnectionString"]!;
        _ = settings["Store:Provider"] switch
        {
            "Sqlite" => options.UseSqlite(connectionString),
            "PostgreSql" => options.UseNpgsql(connectionString),
            var other => throw new NotSupportedException($"Store:Provider '{other}' has no wf_history table."),
        };
        await using var db = new WorkflowDbContext(options.Options);
        return await ReadAsync(db, instanceId);
    }

    private static async Task<IReadOnlyList<StoredHistoryRow>> ReadAsync(WorkflowDbContext db, Guid instanceId) =>
        await db.History.AsNoTracking().Where(h => h.InstanceId == instanceId).OrderBy(h => h.Sequence)
            .Select(h => new StoredHistoryRow(h.Sequence, EF.Property<string?>(h, HistoryRows.MoreJsonProperty)))
            .ToListAsync(TestContext.Current.CancellationToken);
}
