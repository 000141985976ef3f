using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Human tasks (<see cref="ITaskStore"/>).</summary>
public sealed partial class MongoWorkflowStore : ITaskStore
{
    private static FilterDefinitionBuilder<TaskDocument> TaskFilter => Builders<TaskDocument>.Filter;

    public async Task<HumanTask?> GetTaskAsync(string tenant, Guid taskId, CancellationToken cancellationToken) =>
        (await _tasks.Find(t => t.Id == taskId && t.Tenant == tenant).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false))?.ToModel();

    public async Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        var filter = TaskFilter.Eq(t => t.Tenant, query.Tenant);
        if (query.Status is { } status) filter &= TaskFilter.Eq(t => t.Status, status.ToString());
        if (query.Assignee is { } assignee) filter &= TaskFilter.Eq(t => t.Assignee, assignee) | TaskFilter.Eq(t => t.ClaimedBy, assignee);
        if (query.Role is { } role) filter &= TaskFilter.Eq(t => t.Role, role);
        if (query.InstanceId is { } instanceId) filter &= TaskFilter.Eq(t => t.InstanceId, instanceId);
        if (query.CandidateOnly is { } candidate)
        {
            filter &= TaskFilter.Eq(t => t.Assignee, candidate.User)
                      | TaskFilter.Eq(t => t.ClaimedBy, candidate.User)
                      | (TaskFilter.Ne(t => t.Role, null) & TaskFilter.In(t => t.Role, candidate.Roles))
                      | (TaskFilter.Eq(t => t.Assignee, null) & TaskFilter.Eq(t => t.Role, null));
        }

        var total = await _tasks.CountDocumentsAsync(filter, cancellationToken: cancellationToken).ConfigureAwait(false);
        var items = await _tasks.Find(filter).SortBy(t => t.CreatedAt).ThenBy(t => t.Id).Skip(query.Offset).Limit(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<HumanTask>(items.ConvertAll(t => t.ToModel()), (int)total, query.Offset, query.Limit);
    }

    // One document: atomic on its own, no transaction.
    public async Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, IReadOnlyList<EventDelivery> deliveries, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(deliveries);
        var claim = TaskFilter.Eq(t => t.Id, taskId) & TaskFilter.Eq(t => t.Status, nameof(HumanTaskStatus.Open));
        var update = Builders<TaskDocument>.Update.Set(t => t.Status, nameof(HumanTaskStatus.Claimed)).Set(t => t.ClaimedBy, user);
        var claimed = deliveries.Count == 0
            ? (await _tasks.UpdateOneAsync(claim, update, cancellationToken: cancellationToken).ConfigureAwait(false)).MatchedCount == 1
            // The claim and its events, or neither; the events after the instance's last commit in its order.
            : await InTransactionAsync(async (session, ct) =>
            {
                if ((await _tasks.UpdateOneAsync(session, claim, update, cancellationToken: ct).ConfigureAwait(false)).MatchedCount != 1)
                {
                    return false;
                }

                var version = (await _instances.Find(session, Builders<InstanceDocument>.Filter.Eq(i => i.Id, deliveries[0].InstanceId))
                    .Project(i => i.Version).FirstOrDefaultAsync(ct).ConfigureAwait(false));
                for (var i = 0; i < deliveries.Count; i++)
                {
                    deliveries[i].Sequence = ((long)version << 20) + (1 << 19) + i;
                }

                await _deliveries.InsertManyAsync(session, deliveries.Select(DeliveryDocument.From), cancellationToken: ct).ConfigureAwait(false);
                return true;
            }, cancellationToken).ConfigureAwait(false);
        if (claimed)
        {
            return TaskClaimOutcome.Claimed;
        }

        var task = await _tasks.Find(t => t.Id == taskId).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return task switch
        {
            null => TaskClaimOutcome.NotFound,
            { Status: nameof(HumanTaskStatus.Claimed) } when task.ClaimedBy == user => TaskClaimOutcome.Claimed,
            { Status: nameof(HumanTaskStatus.Claimed) } => TaskClaimOutcome.AlreadyClaimed,
            _ => TaskClaimOutcome.Closed,
        };
    }

    // Transaction boundary: a task's completion and the signal that resumes its instance. A completed task without its
    // signal would leave the instance waiting for ever; a signal without the completion would resume it twice.
    public Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(resume);
        return InTransactionAsync(async (session, ct) =>
        {
            var completedAt = Now().UtcDateTime;
            // Open tasks anyone may complete; a claimed one only its claimant (or a caller that names nobody).
            var claimedByCaller = TaskFilter.Eq(t => t.Status, nameof(HumanTaskStatus.Claimed));
            if (user is not null)
            {
                claimedByCaller &= TaskFilter.Eq(t => t.ClaimedBy, user);
            }

            var completed = await _tasks.UpdateOneAsync(session,
                TaskFilter.Eq(t => t.Id, taskId) & (TaskFilter.Eq(t => t.Status, nameof(HumanTaskStatus.Open)) | claimedByCaller),
                Pipeline<TaskDocument>(new BsonDocument
                {
                    { "status", nameof(HumanTaskStatus.Completed) },
                    { "result", resultJson is null ? BsonNull.Value : new BsonDocument("$literal", resultJson) },
                    { "completedAt", completedAt },
                    { "claimedBy", new BsonDocument("$ifNull", new BsonArray { "$claimedBy", user is null ? BsonNull.Value : new BsonDocument("$literal", user) }) },
                }),
                cancellationToken: ct).ConfigureAwait(false);
            if (completed.MatchedCount == 0)
            {
                var task = await _tasks.Find(session, t => t.Id == taskId).FirstOrDefaultAsync(ct).ConfigureAwait(false);
                return task switch
                {
                    null => TaskCompletionOutcome.NotFound,
                    { Status: nameof(HumanTaskStatus.Claimed) } => TaskCompletionOutcome.ClaimedByOther,
                    _ => TaskCompletionOutcome.Closed,
                };
            }

            await _signals.InsertOneAsync(session, SignalDocument.From(resume), cancellationToken: ct).ConfigureAwait(false);
            return TaskCompletionOutcome.Completed;
        }, cancellationToken);
    }
}
