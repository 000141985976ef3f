using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// Signals that failed after every retry, and their replay, within the caller's tenant (a signal is its instance's
/// tenant's): another tenant's signal answers as an unknown id does (404).
/// </summary>
public static class DeadLetterEndpoints
{
    public static RouteGroupBuilder MapDeadLetterEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/dead-letters").WithTags("Dead letters").RequireAuthorization(Policies.Operate);
        group.MapGet("/", List).WithName("ListDeadLetters").WithSummary("Dead-lettered signals with the reason").ProducesValidationProblem();
        group.MapPost("/{id:guid}/replay", Replay).WithName("ReplayDeadLetter")
            .WithSummary("Queue a dead-lettered signal again; a faulted instance resumes from its wait; a repeated Idempotency-Key answers as the first replay did")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict);
        return group;
    }

    private static async Task<Results<Ok<PageView<SignalView>>, ValidationProblem>> List(
        DeadLetterQueue deadLetters, ClaimsPrincipal user, CancellationToken cancellationToken, int offset = 0, int limit = 50)
    {
        if (Problems.InvalidPage(offset, limit) is { } invalid)
        {
            return invalid;
        }

        var page = await deadLetters.ListAsync(user.Tenant(), offset, limit, cancellationToken);
        return TypedResults.Ok(new PageView<SignalView>(page.Items.Select(SignalView.From).ToList(), page.Total, page.Offset, page.Limit));
    }

    private static async Task<Results<Accepted<SignalView>, ValidationProblem, ProblemHttpResult>> Replay(
        Guid id,
        [FromHeader(Name = InstanceEndpoints.IdempotencyHeader)] string? idempotencyKey,
        DeadLetterQueue deadLetters,
        ISignalQueue store,
        ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if (idempotencyKey is { Length: 0 or > 200 })
        {
            return Problems.Invalid(InstanceEndpoints.IdempotencyHeader, "Idempotency-Key must be 1 to 200 characters");
        }

        var outcome = await deadLetters.ReplayAsync(user.Tenant(), id, user.Actor(), idempotencyKey, cancellationToken);
        var signal = outcome == ReplayOutcome.Replayed ? await store.GetSignalAsync(user.Tenant(), id, cancellationToken) : null;
        return outcome switch
        {
            ReplayOutcome.Replayed => TypedResults.Accepted($"/instances/{signal!.InstanceId}", SignalView.From(signal)),
            ReplayOutcome.NotDeadLettered => Problems.Conflict($"Signal {id} is not dead-lettered."),
            _ => Problems.NotFound($"No signal has the id {id}."),
        };
    }
}
