using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// Event subscriptions, in the caller's tenant: another tenant's subscription answers as an unknown id does (404).
/// Designers and admins manage them.
/// </summary>
public static class SubscriptionEndpoints
{
    /// <summary>The longest reason a pause keeps.</summary>
    public const int MaxReasonLength = 400;

    public static RouteGroupBuilder MapSubscriptionEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/subscriptions").WithTags("Subscriptions").RequireAuthorization(Policies.ManageSubscriptions);
        group.MapPost("/", Create).WithName("CreateSubscription")
            .WithSummary("Subscribe an endpoint to events; the answer holds the signing secret, shown this once")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status409Conflict).ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/", List).WithName("ListSubscriptions").WithSummary("The tenant's subscriptions by name, a page at a time")
            .ProducesValidationProblem();
        group.MapGet("/{id:guid}", Get).WithName("GetSubscription").WithSummary("One subscription (without its secret)")
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPut("/{id:guid}", Replace).WithName("ChangeSubscription")
            .WithSummary("Change a subscription's name, endpoint, events and definitions; its state and secret stay")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/pause", Pause).WithName("PauseSubscription")
            .WithSummary("Pause deliveries: events are still recorded and wait for a resume")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{id:guid}/resume", Resume).WithName("ResumeSubscription")
            .WithSummary("Resume deliveries, starting with the events that waited")
            .ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict);
        group.MapPost("/{id:guid}/secret", RotateSecret).WithName("RotateSubscriptionSecret")
            .WithSummary("Make a new signing secret; the previous one still signs during the overlap")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/{id:guid}/deliveries", Deliveries).WithName("ListSubscriptionDeliveries")
            .WithSummary("The subscription's delivery log, newest first: attempts, status, latency and last error")
            .ProducesValidationProblem().ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPost("/{id:guid}/deliveries/{deliveryId:guid}/replay", Replay).WithName("ReplayDelivery")
            .WithSummary("Try a dead-lettered delivery again, with a fresh retry period; it keeps its id")
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapDelete("/{id:guid}", Delete).WithName("DeleteSubscription")
            .WithSummary("Delete a subscription and the deliveries it has not made")
            .ProducesProblem(StatusCodes.Status404NotFound);
        return group;
    }

    private static async Task<Results<Created<SubscriptionWithSecretView>, ValidationProblem, ProblemHttpResult>> Create(
        SubscriptionRequest request, SubscriptionRegistry registry, TimeProvider time, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var change = await registry.CreateAsync(user.Tenant(), request.Spec, request.Enabled ?? true, cancellationToken);
        return change switch
        {
            { Subscription: { } created } => TypedResults.Created($"/subscriptions/{created.Id}", WithSecret(created, time)),
            { Outcome: SubscriptionChangeOutcome.TooMany } => Problems.Conflict(Refusal(change, request.Name)),
            _ => Failed<Created<SubscriptionWithSecretView>>(change, request.Name),
        };
    }

    private static async Task<Results<Ok<PageView<SubscriptionView>>, ValidationProblem>> List(
        ISubscriptionStore store, TimeProvider time, ClaimsPrincipal user, CancellationToken cancellationToken, int limit = 50, string? after = null)
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

        var page = await store.ListSubscriptionsAsync(user.Tenant(), position, limit, cancellationToken);
        var now = time.GetUtcNow().UtcDateTime;
        return TypedResults.Ok(PageView<SubscriptionView>.Of(page, limit, s => SubscriptionView.From(s, now), s => ListCursor.EncodeName(s.Name)));
    }

    private static async Task<Results<Ok<SubscriptionView>, ProblemHttpResult>> Get(
        Guid id, ISubscriptionStore store, TimeProvider time, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        await store.GetSubscriptionAsync(user.Tenant(), id, cancellationToken) is { } subscription
            ? TypedResults.Ok(SubscriptionView.From(subscription, time.GetUtcNow().UtcDateTime))
            : NotFound(id);

    private static async Task<Results<Ok<SubscriptionView>, ValidationProblem, ProblemHttpResult>> Replace(
        Guid id, SubscriptionRequest request, SubscriptionRegistry registry, TimeProvider time, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        Answer(await registry.ReplaceAsync(user.Tenant(), id, request.Spec, cancellationToken), id, request.Name, time);

    private static async Task<Results<Ok<SubscriptionView>, ValidationProblem, ProblemHttpResult>> Pause(
        Guid id, PauseSubscriptionRequest? request, SubscriptionRegistry registry, TimeProvider time, ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        var reason = request?.Reason;
        if (reason is { Length: > MaxReasonLength })
        {
            return Problems.Invalid("reason", $"reason: at most {MaxReasonLength} characters (it has {reason.Length})");
        }

        var by = user.Actor() is { } actor ? $"paused by {actor}" : "paused";
        var why = string.IsNullOrWhiteSpace(reason) ? by : $"{by}: {reason}";
        return Answer(await registry.PauseAsync(user.Tenant(), id, why[..Math.Min(why.Length, MaxReasonLength)], cancellationToken), id, null, time);
    }

    private static async Task<Results<Ok<SubscriptionView>, ValidationProblem, ProblemHttpResult>> Resume(
        Guid id, SubscriptionRegistry registry, TimeProvider time, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        Answer(await registry.ResumeAsync(user.Tenant(), id, cancellationToken), id, null, time);

    private static async Task<Results<Ok<SubscriptionWithSecretView>, ValidationProblem, ProblemHttpResult>> RotateSecret(
        Guid id, RotateSecretRequest? request, SubscriptionRegistry registry, TimeProvider time, ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        TimeSpan? overlap = request?.OverlapSeconds is { } seconds
            ? seconds is >= 0 and <= 400L * 24 * 3600 ? TimeSpan.FromSeconds(seconds) : TimeSpan.MinValue
            : null;
        var change = await registry.RotateSecretAsync(user.Tenant(), id, overlap, cancellationToken);
        return change.Subscription is { } rotated ? TypedResults.Ok(WithSecret(rotated, time)) : Failed<Ok<SubscriptionWithSecretView>>(change, null, id);
    }

    private static async Task<Results<NoContent, ProblemHttpResult>> Delete(
        Guid id, SubscriptionRegistry registry, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        await registry.DeleteAsync(user.Tenant(), id, cancellationToken) ? TypedResults.NoContent() : NotFound(id);

    private static async Task<Results<Ok<PageView<DeliveryView>>, ValidationProblem, ProblemHttpResult>> Deliveries(
        Guid id, ISubscriptionStore subscriptions, IDeliveryQueue deliveries, ClaimsPrincipal user, CancellationToken cancellationToken,
        DeliveryStatus? status = null, int limit = 50, string? after = null)
    {
        if (Problems.InvalidPage(0, limit) is { } invalid)
        {
            return invalid;
        }

        long? position = null;
        if (after is not null && (position = ListCursor.DecodeDelivery(after)) is null)
        {
            return Problems.InvalidAfter();
        }

        if (await subscriptions.GetSubscriptionAsync(user.Tenant(), id, cancellationToken) is null)
        {
            return NotFound(id);
        }

        var page = await deliveries.ListDeliveriesAsync(user.Tenant(), id, status, position, limit, cancellationToken);
        return TypedResults.Ok(PageView<DeliveryView>.Of(page, limit, DeliveryView.From, d => ListCursor.EncodeDelivery(d.Sequence)));
    }

    private static async Task<Results<Ok<ReplayedDeliveryView>, ProblemHttpResult>> Replay(
        Guid id, Guid deliveryId, IDeliveryQueue deliveries, DeliveryDoorbell doorbell, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        if (!await deliveries.ReplayDeliveryAsync(user.Tenant(), id, deliveryId, cancellationToken))
        {
            return Problems.NotFound($"Subscription {id} has no dead-lettered delivery {deliveryId}.");
        }

        doorbell.Ring();
        return TypedResults.Ok(new ReplayedDeliveryView(deliveryId, DeliveryStatus.Pending));
    }

    private static SubscriptionWithSecretView WithSecret(Subscription subscription, TimeProvider time) =>
        new(SubscriptionView.From(subscription, time.GetUtcNow().UtcDateTime), subscription.Secret);

    private static Results<Ok<SubscriptionView>, ValidationProblem, ProblemHttpResult> Answer(
        SubscriptionChange change, Guid id, string? name, TimeProvider time) =>
        change.Subscription is { } changed ? TypedResults.Ok(SubscriptionView.From(changed, time.GetUtcNow().UtcDateTime)) : Failed<Ok<SubscriptionView>>(change, name, id);

    /// <summary>Why a change wrote nothing, as the client's answer.</summary>
    private static Results<T, ValidationProblem, ProblemHttpResult> Failed<T>(SubscriptionChange change, string? name, Guid? id = null)
        where T : IResult => change.Outcome switch
    {
        SubscriptionChangeOutcome.Invalid => Invalid(change),
        SubscriptionChangeOutcome.NotFound => NotFound(id ?? Guid.Empty),
        _ => Problems.Conflict(Refusal(change, name, id)),
    };

    /// <summary>Why a change wrote nothing, in the words the API and the console both answer with.</summary>
    internal static string Refusal(SubscriptionChange change, string? name, Guid? id = null) => change.Outcome switch
    {
        SubscriptionChangeOutcome.Invalid => string.Join("; ", change.Problems.Select(Describe)),
        SubscriptionChangeOutcome.NotFound => NotFoundMessage(id ?? Guid.Empty),
        SubscriptionChangeOutcome.DuplicateName => $"The tenant already has a subscription named '{name}'.",
        SubscriptionChangeOutcome.TooMany => "The tenant holds as many subscriptions as Events:MaxSubscriptionsPerTenant allows; delete one first.",
        _ => "The subscription kept changing under this request; read it again and retry.",
    };

    internal static string NotFoundMessage(Guid id) => $"No subscription {id} exists.";

    private static string Describe(Diagnostic problem) => $"{problem.Path}: {problem.Message}";

    private static ValidationProblem Invalid(SubscriptionChange change) => TypedResults.ValidationProblem(
        change.Problems.GroupBy(p => p.Path).ToDictionary(g => g.Key, g => g.Select(Describe).ToArray()),
        detail: Refusal(change, null),
        title: RequestProblems.Title);

    private static ProblemHttpResult NotFound(Guid id) => Problems.NotFound(NotFoundMessage(id));
}
