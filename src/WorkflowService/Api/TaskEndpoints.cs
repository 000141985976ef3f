using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>The human-task inbox, within the caller's tenant: another tenant's task answers as an unknown id does (404).</summary>
public static class TaskEndpoints
{
    /// <summary>assignee=me: the caller's own user id.</summary>
    public const string Me = "me";

    public static RouteGroupBuilder MapTaskEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/tasks").WithTags("Tasks").RequireAuthorization(Policies.Tasks);
        group.MapGet("/", List).WithName("ListTasks").WithSummary("The inbox: tasks by assignee (me: the caller), role and status; a task user sees the tasks they may work")
            .ProducesValidationProblem();
        group.MapGet("/{id:guid}", Get).WithName("GetTask").WithSummary("One task, if the caller may see it").ProducesProblem(StatusCodes.Status403Forbidden).ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPost("/{id:guid}/claim", Claim).WithName("ClaimTask").WithSummary("Claim an open task for the caller (with authentication off, for the user named in the body)")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status403Forbidden)
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/complete", Complete).WithName("CompleteTask")
            .WithSummary("Complete a task with its result; the waiting instance resumes")
            .ProducesProblem(StatusCodes.Status400BadRequest)
            .ProducesProblem(StatusCodes.Status403Forbidden)
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        return group;
    }

    private static async Task<Results<Ok<PageView<TaskView>>, ValidationProblem, ProblemHttpResult>> List(
        TaskInbox inbox,
        ClaimsPrincipal user,
        IOptions<AuthenticationSettings> authentication,
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

        var caller = TaskCaller.Of(user, authentication.Value);
        if (assignee == Me)
        {
            if (caller.Candidate is null)
            {
                return Problems.Invalid("assignee", caller.IsOpen
                    ? "assignee=me needs an authenticated caller; authentication is off on this node"
                    : "assignee=me needs a user id in the token, and this one carries none");
            }

            assignee = caller.Candidate.User;
        }

        // Callers who read instances read every task; a task user sees the tasks they may work.
        var candidateOnly = caller.ReadsEverything ? null : caller.Candidate ?? new TaskCandidate("", []);
        var page = await inbox.QueryAsync(new TaskQuery(assignee, role, status, instanceId, offset, limit, candidateOnly, user.Tenant()), cancellationToken);
        return TypedResults.Ok(new PageView<TaskView>(page.Items.Select(TaskView.From).ToList(), page.Total, page.Offset, page.Limit));
    }

    private static async Task<Results<Ok<TaskView>, ProblemHttpResult>> Get(
        Guid id, TaskInbox inbox, ClaimsPrincipal user, IOptions<AuthenticationSettings> authentication, CancellationToken cancellationToken)
    {
        var (task, refused) = await FindAsync(id, inbox, TaskCaller.Of(user, authentication.Value), "read", cancellationToken);
        return task is null ? refused! : TypedResults.Ok(TaskView.From(task));
    }

    private static async Task<Results<Ok<TaskView>, ValidationProblem, ProblemHttpResult>> Claim(
        Guid id, ClaimTaskRequest request, TaskInbox inbox, ClaimsPrincipal user, IOptions<AuthenticationSettings> authentication,
        CancellationToken cancellationToken)
    {
        var caller = TaskCaller.Of(user, authentication.Value);
        var claimant = caller.IsOpen ? request.User : caller.Candidate?.User;
        if (caller.IsOpen && (string.IsNullOrWhiteSpace(claimant) || claimant.Length > 200))
        {
            return Problems.Invalid("user", "user is required (1 to 200 characters)");
        }

        if (!caller.IsOpen && request.User is { } named && named != claimant)
        {
            return Problems.Forbidden($"A task is claimed for the caller; user '{named}' is not you.");
        }

        var (found, refused) = await FindAsync(id, inbox, caller, "claim", cancellationToken);
        if (refused is not null)
        {
            return refused;
        }

        var outcome = await inbox.ClaimAsync(found!, claimant!, cancellationToken);
        var task = await inbox.GetAsync(caller.Tenant, id, cancellationToken);
        return outcome switch
        {
            TaskClaimOutcome.Claimed => TypedResults.Ok(TaskView.From(task!)),
            TaskClaimOutcome.AlreadyClaimed => Problems.Conflict($"Task {id} is already claimed by {task!.ClaimedBy}."),
            TaskClaimOutcome.Closed => Problems.Conflict($"Task {id} is {task!.Status} and can no longer be claimed."),
            _ => Problems.NotFound($"No task has the id {id}."),
        };
    }

    private static async Task<Results<Ok<TaskView>, ProblemHttpResult>> Complete(
        Guid id, CompleteTaskRequest request, TaskInbox inbox, ClaimsPrincipal user, IOptions<AuthenticationSettings> authentication,
        CancellationToken cancellationToken)
    {
        var caller = TaskCaller.Of(user, authentication.Value);
        var completer = caller.IsOpen ? request.User : caller.Candidate?.User;
        if (!caller.IsOpen && request.User is { } named && named != completer)
        {
            return Problems.Forbidden($"A task is completed by the caller; user '{named}' is not you.");
        }

        if ((await FindAsync(id, inbox, caller, "complete", cancellationToken)).Refused is { } refused)
        {
            return refused;
        }

        var outcome = await inbox.CompleteAsync(caller.Tenant, id, completer, Json.Text(request.Result), cancellationToken);
        var task = await inbox.GetAsync(caller.Tenant, id, cancellationToken);
        return outcome switch
        {
            TaskCompletionOutcome.Completed => TypedResults.Ok(TaskView.From(task!)),
            TaskCompletionOutcome.ClaimedByOther => Problems.Conflict($"Task {id} is claimed by {task!.ClaimedBy}; only they can complete it."),
            TaskCompletionOutcome.Closed => Problems.Conflict($"Task {id} is {task!.Status} and can no longer be completed."),
            _ => Problems.NotFound($"No task has the id {id}."),
        };
    }

    /// <summary>
    /// The task <paramref name="action"/> is asked for, or the answer why not: 404 when the caller's tenant has no such task
    /// (another tenant's is as unknown), 403 when it is not the caller's to work (reading it is also open to callers who
    /// read everything).
    /// </summary>
    private static async Task<(HumanTask? Task, ProblemHttpResult? Refused)> FindAsync(
        Guid id, TaskInbox inbox, TaskCaller caller, string action, CancellationToken cancellationToken)
    {
        var task = await inbox.GetAsync(caller.Tenant, id, cancellationToken);
        if (task is null)
        {
            return (null, Problems.NotFound($"No task has the id {id}."));
        }

        return caller.MayWork(task) || (action == "read" && caller.ReadsEverything)
            ? (task, null)
            : (null, Problems.Forbidden(caller.Refusal(task, action)));
    }
}
