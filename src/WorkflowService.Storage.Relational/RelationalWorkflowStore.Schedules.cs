using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// Schedules (<see cref="IScheduleStore"/>) in wf_schedules, each read within one tenant. Every write is conditional on
/// the version and the lease token read before it (both concurrency tokens), so a claim, a fire and a caller's change
/// never overwrite one another; no dialect SQL is needed.
/// </summary>
public sealed partial class RelationalWorkflowStore : IScheduleStore
{
    public async Task<bool> CreateScheduleAsync(Schedule schedule, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        db.Schedules.Add(schedule);
        try
        {
            await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (DbUpdateException e) when (dialect.IsUniqueViolation(e))
        {
            return false;
        }
    }

    public async Task<Schedule?> GetScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Schedules.AsNoTracking().FirstOrDefaultAsync(s => s.Id == id && s.Tenant == tenant, cancellationToken).ConfigureAwait(false);
    }

    public async Task<KeysetPage<Schedule>> ListSchedulesAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Schedules.AsNoTracking().Where(s => s.Tenant == tenant);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        if (afterName is not null)
        {
            q = q.Where(s => s.Name.CompareTo(afterName) > 0);
        }

        var items = await q.OrderBy(s => s.Name).Take(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(items, total, limit);
    }

    public async Task<ScheduleWrite> UpdateScheduleAsync(Schedule schedule, int expectedVersion, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var stored = await db.Schedules.FirstOrDefaultAsync(s => s.Id == schedule.Id && s.Tenant == schedule.Tenant, cancellationToken)
            .ConfigureAwait(false);
        if (stored is null)
        {
            return ScheduleWrite.NotFound;
        }

        if (stored.Version != expectedVersion)
        {
            return ScheduleWrite.Conflict;
        }

        // Everything but the lease, which belongs to the node that holds it.
        var (owner, until, token) = (stored.LeaseOwner, stored.LeaseUntilMs, stored.LeaseToken);
        db.Entry(stored).CurrentValues.SetValues(schedule);
        (stored.LeaseOwner, stored.LeaseUntilMs, stored.LeaseToken) = (owner, until, token);
        stored.Version = expectedVersion + 1;
        try
        {
            await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
            return ScheduleWrite.Written;
        }
        catch (DbUpdateConcurrencyException)
        {
            return ScheduleWrite.Conflict;
        }
        catch (DbUpdateException e) when (dialect.IsUniqueViolation(e))
        {
            return ScheduleWrite.DuplicateName;
        }
    }

    public async Task<bool> DeleteScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Schedules.Where(s => s.Id == id && s.Tenant == tenant).ExecuteDeleteAsync(cancellationToken).ConfigureAwait(false) > 0;
    }

    public async Task<IReadOnlyList<Schedule>> ClaimDueSchedulesAsync(string owner, int limit, TimeSpan lease, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var now = NowMs();
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var due = await db.Schedules
            .Where(s => s.Enabled && s.DueAtMs != null && s.DueAtMs <= now && (s.LeaseUntilMs == null || s.LeaseUntilMs < now))
            .OrderBy(s => s.DueAtMs).Take(limit).ToListAsync(cancellationToken).ConfigureAwait(false);
        var claimed = new List<Schedule>(due.Count);
        foreach (var schedule in due)
        {
            // One row at a time: a row another node claimed since the read fails its own concurrency check only.
            schedule.LeaseOwner = owner;
            schedule.LeaseUntilMs = now + (long)lease.TotalMilliseconds;
            schedule.LeaseToken++;
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                claimed.Add(schedule);
            }
            catch (DbUpdateConcurrencyException)
            {
                db.Entry(schedule).State = EntityState.Detached;
            }
        }

        return claimed;
    }

    public async Task<bool> CompleteScheduleFireAsync(Schedule schedule, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var stored = await db.Schedules.FirstOrDefaultAsync(s => s.Id == schedule.Id, cancellationToken).ConfigureAwait(false);
        if (stored is null || stored.LeaseToken != schedule.LeaseToken)
        {
            // Deleted, or taken over by another node after this one's lease expired: that node decides.
            return false;
        }

        var written = stored.Version == schedule.Version;
        if (written)
        {
            db.Entry(stored).CurrentValues.SetValues(schedule);
            stored.Version = schedule.Version + 1;
        }

        stored.LeaseOwner = null;
        stored.LeaseUntilMs = null;
        try
        {
            await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
            return written;
        }
        catch (DbUpdateConcurrencyException)
        {
            return false;
        }
    }

    public async Task ReleaseScheduleClaimsAsync(string owner, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Schedules.Where(s => s.LeaseOwner == owner)
            .ExecuteUpdateAsync(u => u.SetProperty(s => s.LeaseOwner, (string?)null).SetProperty(s => s.LeaseUntilMs, (long?)null), cancellationToken)
            .ConfigureAwait(false);
    }
}
