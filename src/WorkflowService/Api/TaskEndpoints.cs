using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Api;

/// <summary>The human-task inbox.</summary>
public static class TaskEndpoints
{
    public static RouteGroupBuilder MapTaskEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/tasks").WithTags("Tasks");
        group.MapGet("/", List).WithName("ListTasks").WithSummary("The inbox: tasks by assignee, role and status").ProducesValidationProblem();
        group.MapGet("/{id:guid}", Get).WithName("GetTask").ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPost("/{id:guid}/claim", Claim).WithName("ClaimTask").WithSummary("Claim an open task for a user")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/complete", Complete).WithName("CompleteTask")
            .WithSummary("Complete a task with its result; the waiting instance resumes")
            .ProducesProblem(StatusCodes.Status400BadRequest)
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        return group;
    }

    private static async Task<Results<Ok<PageView<TaskView>>, ValidationProblem>> List(
        TaskInbox inbox,
        CancellationToken cancellationToken,
        string? assignee = null,
        string? role = null,
        HumanTaskStatus? status = null,
        Guid? instanceId = null,
        int offset = 0,
        int limit = 50)
    {
        if (Problems.InvalidPage(offset, limit) is { } invalid)
        {
            return invalid;
        }

        var page = await inbox.QueryAsync(new TaskQuery(assignee, role, status, instanceId, offset, limit), cancellationToken);
        return TypedResults.Ok(new PageView<TaskView>(page.Items.Select(TaskView.From).ToList(), page.Total, page.Offset, page.Limit));
    }

    private static async Task<Results<Ok<TaskView>, ProblemHttpResult>> Get(Guid id, TaskInbox inbox, CancellationToken cancellationToken)
    {
        var task = await inbox.GetAsync(id, cancellationToken);
        return task is null ? Problems.NotFound($"No task has the id {id}.") : TypedResults.Ok(TaskView.From(task));
    }

    private static async Task<Results<Ok<TaskView>, ValidationProblem, ProblemHttpResult>> Claim(
        Guid id, ClaimTaskRequest request, TaskInbox inbox, CancellationToken cancellationToken)
    {
        if (string.IsNullOrWhiteSpace(request.User) || request.User.Length > 200)
        {
            return Problems.Invalid("user", "user is required (1 to 200 characters)");
        }

        var outcome = await inbox.ClaimAsync(id, request.User, cancellationToken);
        var task = await inbox.GetAsync(id, cancellationToken);
        return outcome switch
        {
            TaskClaimOutcome.Claimed => TypedResults.Ok(TaskView.From(task!)),
            TaskClaimOutcome.AlreadyClaimed => Problems.Conflict($"Task {id} is already claimed by {task!.ClaimedBy}."),
            TaskClaimOutcome.Closed => Problems.Conflict($"Task {id} is {task!.Status} and can no longer be claimed."),
            _ => Problems.NotFound($"No task has the id {id}."),
        };
    }

    private static async Task<Results<Ok<TaskView>, ProblemHttpResult>> Complete(
        Guid id, CompleteTaskRequest request, TaskInbox inbox, CancellationToken cancellationToken)
    {
        var outcome = await inbox.CompleteAsync(id, request.User, Json.Text(request.Result), cancellationToken);
        var task = await inbox.GetAsync(id, cancellationToken);
        return outcome switch
        {
            TaskCompletionOutcome.Completed => TypedResults.Ok(TaskView.From(task!)),
            TaskCompletionOutcome.ClaimedByOther => Problems.Conflict($"Task {id} is claimed by {task!.ClaimedBy}; only they can complete it."),
            TaskCompletionOutcome.Closed => Problems.Conflict($"Task {id} is {task!.Status} and can no longer be completed."),
            _ => Problems.NotFound($"No task has the id {id}."),
        };
    }
}
