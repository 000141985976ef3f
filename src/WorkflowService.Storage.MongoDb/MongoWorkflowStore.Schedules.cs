using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Schedules (<see cref="IScheduleStore"/>) in the "schedules" collection, each read within one tenant. As in the
/// relational stores, every write is conditional on the version and the lease token read before it.
/// </summary>
public sealed partial class MongoWorkflowStore : IScheduleStore
{
    public const string SchedulesCollection = "schedules";

    private static readonly FilterDefinitionBuilder<ScheduleDocument> ScheduleFilter = Builders<ScheduleDocument>.Filter;
    private static readonly UpdateDefinitionBuilder<ScheduleDocument> ScheduleUpdate = Builders<ScheduleDocument>.Update;

    private IMongoCollection<ScheduleDocument> Schedules => _database.GetCollection<ScheduleDocument>(SchedulesCollection);

    public async Task<bool> CreateScheduleAsync(Schedule schedule, CancellationToken cancellationToken)
    {
        try
        {
            await Schedules.InsertOneAsync(ScheduleDocument.From(schedule), cancellationToken: cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            return false;
        }
    }

    public async Task<Schedule?> GetScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        (await Schedules.Find(ScheduleOfTenant(tenant, id)).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false))?.ToModel();

    public async Task<KeysetPage<Schedule>> ListSchedulesAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var filter = ScheduleFilter.Eq(s => s.Tenant, tenant);
        var total = await Schedules.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        if (afterName is not null)
        {
            filter &= ScheduleFilter.Gt(s => s.Name, afterName);
        }

        var page = await Schedules.Find(filter).SortBy(s => s.Name).Limit(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(page.ConvertAll(s => s.ToModel()), (int)total, limit);
    }

    public async Task<ScheduleWrite> UpdateScheduleAsync(Schedule schedule, int expectedVersion, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        try
        {
            var updated = await Schedules.UpdateOneAsync(
                ScheduleOfTenant(schedule.Tenant, schedule.Id) & ScheduleFilter.Eq(s => s.Version, expectedVersion),
                AllButLease(ScheduleDocument.From(schedule)).Set(s => s.Version, expectedVersion + 1), cancellationToken: cancellationToken)
                .ConfigureAwait(false);
            if (updated.MatchedCount > 0)
            {
                return ScheduleWrite.Written;
            }
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            return ScheduleWrite.DuplicateName;
        }

        return await GetScheduleAsync(schedule.Tenant, schedule.Id, cancellationToken).ConfigureAwait(false) is null
            ? ScheduleWrite.NotFound
            : ScheduleWrite.Conflict;
    }

    public async Task<bool> DeleteScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        (await Schedules.DeleteOneAsync(ScheduleOfTenant(tenant, id), cancellationToken).ConfigureAwait(false)).DeletedCount > 0;

    public async Task<IReadOnlyList<Schedule>> ClaimDueSchedulesAsync(string owner, int limit, TimeSpan lease, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var now = NowMs();
        var due = ScheduleFilter.Eq(s => s.Enabled, true) & ScheduleFilter.Lte(s => s.DueAtMs, now)
            & (ScheduleFilter.Eq(s => s.LeaseUntilMs, null) | ScheduleFilter.Lt(s => s.LeaseUntilMs, now));
        var claim = ScheduleUpdate.Set(s => s.LeaseOwner, owner).Set(s => s.LeaseUntilMs, now + (long)lease.TotalMilliseconds).Inc(s => s.LeaseToken, 1);
        var options = new FindOneAndUpdateOptions<ScheduleDocument> { ReturnDocument = ReturnDocument.After, Sort = Builders<ScheduleDocument>.Sort.Ascending(s => s.DueAtMs) };
        var claimed = new List<Schedule>();
        // One document at a time: findAndModify is atomic, so two nodes never lease the same schedule.
        while (claimed.Count < limit
               && await Schedules.FindOneAndUpdateAsync(due, claim, options, cancellationToken).ConfigureAwait(false) is { } document)
        {
            claimed.Add(document.ToModel());
        }

        return claimed;
    }

    public async Task<bool> CompleteScheduleFireAsync(Schedule schedule, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        var claim = ScheduleFilter.Eq(s => s.Id, schedule.Id) & ScheduleFilter.Eq(s => s.LeaseToken, schedule.LeaseToken);
        var release = ScheduleUpdate.Set(s => s.LeaseOwner, null).Set(s => s.LeaseUntilMs, null);
        var written = await Schedules.UpdateOneAsync(claim & ScheduleFilter.Eq(s => s.Version, schedule.Version),
            ScheduleUpdate.Combine(AllButLease(ScheduleDocument.From(schedule)), release).Set(s => s.Version, schedule.Version + 1),
            cancellationToken: cancellationToken).ConfigureAwait(false);
        if (written.MatchedCount > 0)
        {
            return true;
        }

        // Changed by a caller meanwhile: only the lease is handed back, and the next claim decides again.
        await Schedules.UpdateOneAsync(claim, release, cancellationToken: cancellationToken).ConfigureAwait(false);
        return false;
    }

    public async Task ReleaseScheduleClaimsAsync(string owner, CancellationToken cancellationToken) =>
        await Schedules.UpdateManyAsync(ScheduleFilter.Eq(s => s.LeaseOwner, owner),
            ScheduleUpdate.Set(s => s.LeaseOwner, null).Set(s => s.LeaseUntilMs, null), cancellationToken: cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Step 7: a tenant's schedule names are unique (the index also serves the list by name), and the claim reads due
    /// schedules by due time.
    /// </summary>
    private async Task CreateScheduleIndexesAsync(CancellationToken cancellationToken)
    {
        var keys = Builders<ScheduleDocument>.IndexKeys;
        await Schedules.Indexes.CreateManyAsync(
        [
            new(keys.Ascending(s => s.Tenant).Ascending(s => s.Name), new CreateIndexOptions { Name = "tenant_name", Unique = true }),
            new(keys.Ascending(s => s.DueAtMs), new CreateIndexOptions { Name = "dueAtMs" }),
        ], cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Every field but the lease (and the version, which the write sets).</summary>
    private static UpdateDefinition<ScheduleDocument> AllButLease(ScheduleDocument d) => ScheduleUpdate
        .Set(s => s.Name, d.Name).Set(s => s.DefinitionName, d.DefinitionName).Set(s => s.DefinitionVersion, d.DefinitionVersion)
        .Set(s => s.InputJson, d.InputJson).Set(s => s.Cron, d.Cron).Set(s => s.TimeZone, d.TimeZone).Set(s => s.IntervalSeconds, d.IntervalSeconds)
        .Set(s => s.StartAt, d.StartAt).Set(s => s.EndAt, d.EndAt).Set(s => s.JitterSeconds, d.JitterSeconds)
        .Set(s => s.BusinessKeyTemplate, d.BusinessKeyTemplate).Set(s => s.Overlap, d.Overlap).Set(s => s.CatchUp, d.CatchUp)
        .Set(s => s.CatchUpWindowSeconds, d.CatchUpWindowSeconds).Set(s => s.Enabled, d.Enabled).Set(s => s.PausedReason, d.PausedReason)
        .Set(s => s.NextFireMs, d.NextFireMs).Set(s => s.DueAtMs, d.DueAtMs).Set(s => s.BufferedFireMs, d.BufferedFireMs)
        .Set(s => s.LastInstanceId, d.LastInstanceId).Set(s => s.Recent, d.Recent).Set(s => s.UpdatedAt, d.UpdatedAt);

    private static FilterDefinition<ScheduleDocument> ScheduleOfTenant(string tenant, Guid id) =>
        ScheduleFilter.Eq(s => s.Id, id) & ScheduleFilter.Eq(s => s.Tenant, tenant);
}
