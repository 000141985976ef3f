using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// Schedules, in the caller's tenant: another tenant's schedule answers as an unknown id does (404). Designers and
/// admins manage them.
/// </summary>
public static class ScheduleEndpoints
{
    /// <summary>The longest reason a pause keeps.</summary>
    public const int MaxReasonLength = 400;

    public static RouteGroupBuilder MapScheduleEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/schedules").WithTags("Schedules").RequireAuthorization(Policies.ManageSchedules);
        group.MapPost("/", Create).WithName("CreateSchedule")
            .WithSummary("Start a definition on a cron expression in a time zone, or on a fixed interval")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status409Conflict).ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/", List).WithName("ListSchedules").WithSummary("The tenant's schedules by name, with their next fire times and recent actions")
            .ProducesValidationProblem();
        group.MapGet("/{id:guid}", Get).WithName("GetSchedule").WithSummary("One schedule, with its next fire times and recent actions")
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPut("/{id:guid}", Replace).WithName("ChangeSchedule")
            .WithSummary("Change a schedule; its calendar starts again from now, its pause and recent actions stay")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/pause", Pause).WithName("PauseSchedule").WithSummary("Pause a schedule: no occurrence starts until it is resumed")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/resume", Resume).WithName("ResumeSchedule")
            .WithSummary("Resume a schedule from now; what fell due while it was paused does not run")
            .ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict);
        group.MapPost("/{id:guid}/trigger", Trigger).WithName("TriggerSchedule")
            .WithSummary("Start an occurrence now, whatever its calendar and pause say, as the overlap policy decides")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/backfill", Backfill).WithName("BackfillSchedule")
            .WithSummary("Start every occurrence of a past (or future) range as the overlap policy decides; one that already ran is found, not started again")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapDelete("/{id:guid}", Delete).WithName("DeleteSchedule").WithSummary("Delete a schedule; the instances it started stay")
            .ProducesProblem(StatusCodes.Status404NotFound);
        return group;
    }

    private static async Task<Results<Created<ScheduleView>, ValidationProblem, ProblemHttpResult>> Create(
        ScheduleRequest request, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var change = await registry.CreateAsync(user.Tenant(), request.Spec, request.Enabled ?? true, cancellationToken);
        return change switch
        {
            { Schedule: { } created } => TypedResults.Created($"/schedules/{created.Id}", ScheduleView.From(created, options.Value.NextFireTimesShown)),
            { Outcome: ScheduleChangeOutcome.TooMany } => Problems.Conflict(Refusal(change, request.Name)),
            _ => Failed<Created<ScheduleView>>(change, request.Name),
        };
    }

    private static async Task<Results<Ok<PageView<ScheduleView>>, ValidationProblem>> List(
        IScheduleStore store, IOptions<ScheduleOptions> options, ClaimsPrincipal user, CancellationToken cancellationToken, int limit = 50,
        string? after = null)
    {
        if (Problems.InvalidPage(0, limit) is { } invalid)
        {
            return invalid;
        }

        string? position = null;
        if (after is not null && (position = ListCursor.DecodeName(after)) is null)
        {
            return Problems.InvalidAfter();
        }

        var page = await store.ListSchedulesAsync(user.Tenant(), position, limit, cancellationToken);
        var shown = options.Value.NextFireTimesShown;
        return TypedResults.Ok(PageView<ScheduleView>.Of(page, limit, s => ScheduleView.From(s, shown), s => ListCursor.EncodeName(s.Name)));
    }

    private static async Task<Results<Ok<ScheduleView>, ProblemHttpResult>> Get(
        Guid id, IScheduleStore store, IOptions<ScheduleOptions> options, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        await store.GetScheduleAsync(user.Tenant(), id, cancellationToken) is { } schedule
            ? TypedResults.Ok(ScheduleView.From(schedule, options.Value.NextFireTimesShown))
            : NotFound(id);

    private static async Task<Results<Ok<ScheduleView>, ValidationProblem, ProblemHttpResult>> Replace(
        Guid id, ScheduleRequest request, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user,
        CancellationToken cancellationToken) =>
        Answer(await registry.ReplaceAsync(user.Tenant(), id, request.Spec, cancellationToken), id, request.Name, options.Value);

    private static async Task<Results<Ok<ScheduleView>, ValidationProblem, ProblemHttpResult>> Pause(
        Guid id, PauseScheduleRequest? request, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        var reason = request?.Reason;
        if (reason is { Length: > MaxReasonLength })
        {
            return Problems.Invalid("reason", $"reason: at most {MaxReasonLength} characters (it has {reason.Length})");
        }

        var by = user.Actor() is { } actor ? $"paused by {actor}" : "paused";
        var why = string.IsNullOrWhiteSpace(reason) ? by : $"{by}: {reason}";
        return Answer(await registry.PauseAsync(user.Tenant(), id, why[..Math.Min(why.Length, MaxReasonLength)], cancellationToken), id, null, options.Value);
    }

    private static async Task<Results<Ok<ScheduleView>, ValidationProblem, ProblemHttpResult>> Resume(
        Guid id, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        Answer(await registry.ResumeAsync(user.Tenant(), id, cancellationToken), id, null, options.Value);

    private static async Task<Results<Ok<ScheduleFiringView>, ValidationProblem, ProblemHttpResult>> Trigger(
        Guid id, TriggerScheduleRequest? request, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user,
        CancellationToken cancellationToken) =>
        Fired(await registry.TriggerAsync(user.Tenant(), id, request?.OverlapPolicy, cancellationToken), id, options.Value);

    private static async Task<Results<Ok<ScheduleFiringView>, ValidationProblem, ProblemHttpResult>> Backfill(
        Guid id, BackfillRequest request, ScheduleRegistry registry, IOptions<ScheduleOptions> options, ClaimsPrincipal user,
        CancellationToken cancellationToken) =>
        Fired(await registry.BackfillAsync(user.Tenant(), id, request.From, request.To, request.OverlapPolicy, cancellationToken), id, options.Value);

    private static async Task<Results<NoContent, ProblemHttpResult>> Delete(
        Guid id, ScheduleRegistry registry, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        await registry.DeleteAsync(user.Tenant(), id, cancellationToken) ? TypedResults.NoContent() : NotFound(id);

    private static Results<Ok<ScheduleFiringView>, ValidationProblem, ProblemHttpResult> Fired(ScheduleFiring firing, Guid id, ScheduleOptions options) =>
        firing.Change.Schedule is { } schedule
            ? TypedResults.Ok(new ScheduleFiringView([.. firing.Actions.Select(ScheduleActionView.From)], ScheduleView.From(schedule, options.NextFireTimesShown)))
            : Failed<Ok<ScheduleFiringView>>(firing.Change, null, id);

    private static Results<Ok<ScheduleView>, ValidationProblem, ProblemHttpResult> Answer(
        ScheduleChange change, Guid id, string? name, ScheduleOptions options) =>
        change.Schedule is { } changed ? TypedResults.Ok(ScheduleView.From(changed, options.NextFireTimesShown)) : Failed<Ok<ScheduleView>>(change, name, id);

    /// <summary>Why a change wrote nothing, as the client's answer.</summary>
    private static Results<T, ValidationProblem, ProblemHttpResult> Failed<T>(ScheduleChange change, string? name, Guid? id = null)
        where T : IResult => change.Outcome switch
    {
        ScheduleChangeOutcome.Invalid => Invalid(change),
        ScheduleChangeOutcome.NotFound => NotFound(id ?? Guid.Empty),
        _ => Problems.Conflict(Refusal(change, name, id)),
    };

    /// <summary>Why a change wrote nothing, in the words the API and the console both answer with.</summary>
    internal static string Refusal(ScheduleChange change, string? name, Guid? id = null) => change.Outcome switch
    {
        ScheduleChangeOutcome.Invalid => string.Join("; ", change.Problems.Select(Describe)),
        ScheduleChangeOutcome.NotFound => NotFoundMessage(id ?? Guid.Empty),
        ScheduleChangeOutcome.DuplicateName => $"The tenant already has a schedule named '{name}'.",
        ScheduleChangeOutcome.TooMany => "The tenant holds as many schedules as Schedules:MaxSchedulesPerTenant allows; delete one first.",
        _ => "The schedule kept changing under this request; read it again and retry.",
    };

    internal static string NotFoundMessage(Guid id) => $"No schedule {id} exists.";

    private static string Describe(Diagnostic problem) => $"{problem.Path}: {problem.Message}";

    private static ValidationProblem Invalid(ScheduleChange change) => TypedResults.ValidationProblem(
        change.Problems.GroupBy(p => p.Path).ToDictionary(g => g.Key, g => g.Select(Describe).ToArray()),
        detail: Refusal(change, null),
        title: RequestProblems.Title);

    private static ProblemHttpResult NotFound(Guid id) => Problems.NotFound(NotFoundMessage(id));
}
