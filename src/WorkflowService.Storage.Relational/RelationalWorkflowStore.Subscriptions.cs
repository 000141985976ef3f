using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Event subscriptions (<see cref="ISubscriptionStore"/>) in wf_subscriptions, each read within one tenant.</summary>
public sealed partial class RelationalWorkflowStore : ISubscriptionStore
{
    public async Task<bool> CreateSubscriptionAsync(Subscription subscription, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        db.Subscriptions.Add(subscription);
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

    public async Task<Subscription?> GetSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Subscriptions.AsNoTracking().FirstOrDefaultAsync(s => s.Id == id && s.Tenant == tenant, cancellationToken).ConfigureAwait(false);
    }

    public async Task<KeysetPage<Subscription>> ListSubscriptionsAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Subscriptions.AsNoTracking().Where(s => s.Tenant == tenant);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        if (afterName is not null)
        {
            q = q.Where(s => s.Name.CompareTo(afterName) > 0);
        }

        var items = await q.OrderBy(s => s.Name).Take(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(items, total, limit);
    }

    public async Task<SubscriptionWrite> UpdateSubscriptionAsync(Subscription subscription, int expectedVersion, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var stored = await db.Subscriptions.FirstOrDefaultAsync(s => s.Id == subscription.Id && s.Tenant == subscription.Tenant, cancellationToken)
            .ConfigureAwait(false);
        if (stored is null)
        {
            return SubscriptionWrite.NotFound;
        }

        if (stored.Version != expectedVersion)
        {
            return SubscriptionWrite.Conflict;
        }

        // The version is the concurrency token: the UPDATE applies only while the row still has the version read here.
        db.Entry(stored).CurrentValues.SetValues(subscription);
        try
        {
            await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
            return SubscriptionWrite.Written;
        }
        catch (DbUpdateConcurrencyException)
        {
            return SubscriptionWrite.Conflict;
        }
        catch (DbUpdateException e) when (dialect.IsUniqueViolation(e))
        {
            return SubscriptionWrite.DuplicateName;
        }
    }

    public async Task<bool> DeleteSubscriptionAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        // In the store's execution strategy: a transient failure runs the whole transaction again.
        return await db.Database.CreateExecutionStrategy().ExecuteAsync(async ct =>
        {
            await using var transaction = await db.Database.BeginTransactionAsync(ct).ConfigureAwait(false);
            var deleted = await db.Subscriptions.Where(s => s.Id == id && s.Tenant == tenant).ExecuteDeleteAsync(ct).ConfigureAwait(false) > 0;
            if (deleted)
            {
                // Its deliveries go with it: none is made after, and its log has no one left to read it.
                // The log first, then the queue: a replay or a commit between the two finds no log row, or its queue row goes here.
                await db.Deliveries.Where(d => d.SubscriptionId == id).ExecuteDeleteAsync(ct).ConfigureAwait(false);
                await db.DeliveryQueue.Where(e => e.SubscriptionId == id).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            }

            await transaction.CommitAsync(ct).ConfigureAwait(false);
            return deleted;
        }, cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<Subscription>> GetAllSubscriptionsAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Subscriptions.AsNoTracking().ToListAsync(cancellationToken).ConfigureAwait(false);
    }
}
