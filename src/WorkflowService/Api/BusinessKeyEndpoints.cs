using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.Search;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// An instance addressed by its definition and the business key it was started with, in the caller's tenant. The store
/// keeps at most one open instance per definition and key (ended ones may share it), so the key resolves to one id: the
/// open instance's, else the newest ended one's. The id's own endpoints then answer.
/// </summary>
public static class BusinessKeyEndpoints
{
    public static RouteGroupBuilder MapBusinessKeyEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/definitions/{name}/instances").WithTags("Instances");

        group.MapGet("/{businessKey}", Get).WithName("GetInstanceByKey").RequireAuthorization(Policies.ReadInstances)
            .WithRequestTimeout(StoreUnavailable.LongPollPolicy)
            .WithSummary("The instance of this definition with this business key; waitFor, afterRevision and timeout wait as on GetInstance")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status503ServiceUnavailable)
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPost("/{businessKey}/signals", Signal).WithName("SendSignalByKey").RequireAuthorization(Policies.RunInstances)
            .WithSummary("Send a signal to the instance of this definition with this business key, as SendSignal does")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/{businessKey}/signal-with-start", SignalWithStart).WithName("SignalWithStart").RequireAuthorization(Policies.RunInstances)
            .WithSummary("Send a signal to the instance with this business key, starting it (with input) first when there is none; racing requests share one instance")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        return group;
    }

    private static async Task<Results<Ok<InstanceView>, ValidationProblem, ProblemHttpResult>> Get(
        string name,
        string businessKey,
        WorkflowRuntime runtime,
        IInstanceStore store,
        InstanceSearchValues searchValues,
        LongPollGate gate,
        IOptions<RateLimitingOptions> rateLimits,
        HttpContext http,
        ClaimsPrincipal user,
        CancellationToken cancellationToken,
        [FromQuery] string[]? waitFor = null,
        [FromQuery] int? afterRevision = null,
        [FromQuery] double? timeout = null)
    {
        if (InvalidAddress(name, businessKey) is { } invalid)
        {
            return invalid;
        }

        return await FindIdAsync(store, user, name, businessKey, cancellationToken) is { } id
            ? await InstanceEndpoints.Get(id, runtime, store, searchValues, gate, rateLimits, http, user, cancellationToken, waitFor, afterRevision, timeout)
            : NotFound(name, businessKey);
    }

    private static async Task<Results<Accepted<SignalView>, Ok<SignalView>, ValidationProblem, ProblemHttpResult>> Signal(
        string name,
        string businessKey,
        SendSignalRequest request,
        [FromHeader(Name = InstanceEndpoints.IdempotencyHeader)] string? idempotencyKey,
        WorkflowRuntime runtime,
        IInstanceStore store,
        ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if (InvalidAddress(name, businessKey) is { } invalid)
        {
            return invalid;
        }

        return await FindIdAsync(store, user, name, businessKey, cancellationToken) is { } id
            ? await InstanceEndpoints.Signal(id, request, idempotencyKey, runtime, user, cancellationToken)
            : NotFound(name, businessKey);
    }

    /// <summary>
    /// Start (or find) the instance with this key, then signal it. The start is idempotent on the key (the store refuses a
    /// second instance with it), so racing requests all signal the one instance; a signal that arrives before the instance
    /// waits for it is kept until it does.
    /// </summary>
    private static async Task<Results<Accepted<SignalWithStartView>, Ok<SignalWithStartView>, ValidationProblem, ProblemHttpResult>> SignalWithStart(
        string name,
        string businessKey,
        SignalWithStartRequest request,
        [FromHeader(Name = InstanceEndpoints.IdempotencyHeader)] string? idempotencyKey,
        WorkflowRuntime runtime,
        ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if ((InvalidAddress(name, businessKey) ?? InstanceEndpoints.InvalidSignal(request.Signal, idempotencyKey)
                ?? InstanceEndpoints.InvalidVersion(request.Version)) is { } invalid)
        {
            return invalid;
        }

        // An instance found open may end before the signal reaches it: then the next start makes a new one. Each round
        // ends an instance, so a few rounds only run out under a definition that ends as fast as it is signalled.
        for (var round = 1; ; round++)
        {
            var start = await runtime.StartAsync(
                new StartRequest(name, request.Version, Json.Text(request.Input), businessKey, IdempotencyKey: null, Actor: user.Actor(), Tenant: user.Tenant()),
                cancellationToken);
            if (start.Instance is not { } instance)
            {
                return Problems.NotFound(request.Version is { } v ? $"Definition '{name}' has no version {v}." : $"No definition is named '{name}'.");
            }

            var result = await runtime.SignalAsync(
                new SignalRequest(instance.Id, request.Signal, Json.Text(request.Payload), DueAt: null, idempotencyKey, user.Actor(), user.Tenant()),
                cancellationToken);
            if (result.Outcome != SignalOutcome.InstanceEnded || round == MaxRounds)
            {
                return Answer(name, businessKey, start, result);
            }
        }
    }

    /// <summary>How many times signal-with-start starts again after the instance it found ended before the signal.</summary>
    private const int MaxRounds = 3;

    private static Results<Accepted<SignalWithStartView>, Ok<SignalWithStartView>, ValidationProblem, ProblemHttpResult> Answer(
        string name, string businessKey, StartResult start, SignalResult result)
    {
        var instance = start.Instance!;
        var started = start.Outcome == StartOutcome.Created;
        return result.Outcome switch
        {
            SignalOutcome.Applied or SignalOutcome.Accepted => TypedResults.Accepted(
                $"/instances/{instance.Id}/signals", new SignalWithStartView(started, instance.Id, SignalView.From(result.Signal!))),
            SignalOutcome.Duplicate => TypedResults.Ok(new SignalWithStartView(started, instance.Id, SignalView.From(result.Signal!))),
            SignalOutcome.InstanceEnded => Problems.Conflict(
                $"The instances of '{name}' with business key '{businessKey}' ended, {MaxRounds} times, before the signal reached them; "
                + "send it again, or to a definition that waits for it."),
            _ => NotFound(name, businessKey),
        };
    }

    /// <summary>
    /// The id of the open instance with this key in the caller's tenant, else of the newest ended one (so that a long-poll
    /// for its end still finds it); another tenant's is not found. One read of the key's index: the open instance is the
    /// newest with its key, since none can be started with the key while it is open.
    /// </summary>
    private static Task<Guid?> FindIdAsync(IInstanceStore store, ClaimsPrincipal user, string name, string businessKey,
        CancellationToken cancellationToken) =>
        store.FindNewestInstanceIdAsync(user.Tenant(), name, businessKey, cancellationToken);

    private static ValidationProblem? InvalidAddress(string name, string businessKey) =>
        DefinitionCompiler.IsValidName(name)
            ? InstanceEndpoints.InvalidBusinessKey(businessKey)
            : Problems.Invalid("name", "name must name a definition: 1-100 letters, digits, '.', '_' or '-'");

    private static ProblemHttpResult NotFound(string name, string businessKey) =>
        Problems.NotFound($"No instance of '{name}' has the business key '{businessKey}'.");
}
