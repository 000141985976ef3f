using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Human tasks (<see cref="ITaskStore"/>).</summary>
public sealed partial class RelationalWorkflowStore : ITaskStore
{
    public async Task<HumanTask?> GetTaskAsync(string tenant, Guid taskId, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId && t.Tenant == tenant, cancellationToken).ConfigureAwait(false);
    }

    public async Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = db.Tasks.AsNoTracking().Where(t => t.Tenant == query.Tenant);
        if (query.Status is { } status) q = q.Where(t => t.Status == status);
        if (query.Assignee is not null) q = q.Where(t => t.Assignee == query.Assignee || t.ClaimedBy == query.Assignee);
        if (query.Role is not null) q = q.Where(t => t.Role == query.Role);
        if (query.InstanceId is { } instanceId) q = q.Where(t => t.InstanceId == instanceId);
        if (query.CandidateOnly is { } candidate)
        {
            var user = candidate.User;
            var roles = candidate.Roles.ToList();
            q = q.Where(t => t.Assignee == user || t.ClaimedBy == user || (t.Role != null && roles.Contains(t.Role))
                             || (t.Assignee == null && t.Role == null));
        }

        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        var items = await q.OrderBy(t => t.CreatedAt).ThenBy(t => t.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<HumanTask>(items, total, query.Offset, query.Limit);
    }

    public async Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, IReadOnlyList<EventDelivery> deliveries, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(deliveries);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        var claimed = await RetryTransientAsync(async (db, ct) =>
        {
            // The claim and its events, or neither.
            await using var transaction = await db.Database.BeginTransactionAsync(ct).ConfigureAwait(false);
            var rows = await db.Tasks.Where(t => t.Id == taskId && t.Status == HumanTaskStatus.Open)
                .ExecuteUpdateAsync(u => u.SetProperty(t => t.Status, HumanTaskStatus.Claimed).SetProperty(t => t.ClaimedBy, user), ct)
                .ConfigureAwait(false);
            if (rows == 1 && deliveries.Count > 0)
            {
                db.Deliveries.AddRange(deliveries);
                await db.SaveChangesAsync(ct).ConfigureAwait(false);
                // Each one waits in the queue, unleased (schema 18): the claim takes it.
                db.DeliveryQueue.AddRange(deliveries.Select(d => new DeliveryQueueEntry
                {
                    Id = d.Id, SubscriptionId = d.SubscriptionId, InstanceId = d.InstanceId, Sequence = d.Sequence, DueAtMs = d.DueAtMs,
                }));
                await db.SaveChangesAsync(ct).ConfigureAwait(false);
            }

            await transaction.CommitAsync(ct).ConfigureAwait(false);
            return rows == 1;
        }, cancellationToken).ConfigureAwait(false);
        if (claimed)
        {
            return TaskClaimOutcome.Claimed;
        }

        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);

        var task = await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId, cancellationToken).ConfigureAwait(false);
        return task switch
        {
            null => TaskClaimOutcome.NotFound,
            { Status: HumanTaskStatus.Claimed } when task.ClaimedBy == user => TaskClaimOutcome.Claimed,
            { Status: HumanTaskStatus.Claimed } => TaskClaimOutcome.AlreadyClaimed,
            _ => TaskClaimOutcome.Closed,
        };
    }

    public async Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        return await RetryTransientAsync((db, ct) => CompleteTaskOnceAsync(db, taskId, user, resultJson, resume, ct), cancellationToken).ConfigureAwait(false);
    }

    private async Task<TaskCompletionOutcome> CompleteTaskOnceAsync(WorkflowDbContext db, Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken)
    {
        await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        var completedAt = Now().UtcDateTime;
        // Open tasks anyone may complete; a claimed one only its claimant (or a caller that names nobody).
        var rows = await db.Tasks
            .Where(t => t.Id == taskId && (t.Status == HumanTaskStatus.Open
                                           || (t.Status == HumanTaskStatus.Claimed && (user == null || t.ClaimedBy == user))))
            .ExecuteUpdateAsync(u => u
                .SetProperty(t => t.Status, HumanTaskStatus.Completed)
                .SetProperty(t => t.ResultJson, resultJson)
                .SetProperty(t => t.CompletedAt, completedAt)
                .SetProperty(t => t.ClaimedBy, t => t.ClaimedBy ?? user), cancellationToken).ConfigureAwait(false);
        if (rows == 0)
        {
            var task = await db.Tasks.AsNoTracking().FirstOrDefaultAsync(t => t.Id == taskId, cancellationToken).ConfigureAwait(false);
            return task switch
            {
                null => TaskCompletionOutcome.NotFound,
                { Status: HumanTaskStatus.Claimed } => TaskCompletionOutcome.ClaimedByOther,
                _ => TaskCompletionOutcome.Closed,
            };
        }

        db.Signals.Add(resume);
        await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
        return TaskCompletionOutcome.Completed;
    }
}
