using System.ComponentModel;
using System.Diagnostics.CodeAnalysis;
using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// Starting, reading, waiting for, cancelling and signalling instances, each within the caller's tenant: an instance of
/// another tenant answers as an unknown id does (404), and nothing changes.
/// </summary>
public static class InstanceEndpoints
{
    public const string IdempotencyHeader = "Idempotency-Key";

    public static RouteGroupBuilder MapInstanceEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/instances").WithTags("Instances");

        group.MapPost("/", Start).WithName("StartInstance").RequireAuthorization(Policies.RunInstances)
            .WithSummary("Start an instance; a repeated Idempotency-Key, or the business key of an open instance, returns the existing one")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/", List).WithName("ListInstances").RequireAuthorization(Policies.ReadInstances).WithSummary("List instances by definition, status, business key and creation time")
            .ProducesValidationProblem();
        group.MapGet("/counts", Counts).WithName("CountInstancesByValue").RequireAuthorization(Policies.ReadInstances)
            .WithSummary("How many instances have each value of a search attribute (or status, definition, business key), most first; with filter, of the matching ones")
            .ProducesValidationProblem();
        group.MapGet("/{id:guid}", Get).WithName("GetInstance").RequireAuthorization(Policies.ReadInstances)
            .WithRequestTimeout(StoreUnavailable.LongPollPolicy)
            .WithSummary("An instance; with waitFor, waits (bounded by timeout) until it reaches one of those statuses or ends; with afterRevision, until its state has been committed again (a later revision: a signal applied, a step run)")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status503ServiceUnavailable)
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapGet("/{id:guid}/history", History).WithName("GetInstanceHistory").RequireAuthorization(Policies.ReadInstances)
            .WithSummary("The instance's history, oldest first, a page at a time")
            .WithDescription(PagedSince("every event"))
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapPost("/{id:guid}/cancel", Cancel).WithName("CancelInstance").RequireAuthorization(Policies.Operate)
            .WithSummary("Cancel an instance cooperatively: its definition's cancel path runs, then it ends cancelled")
            .ProducesStateChangeProblems(takesBody: true);
        group.MapPost("/{id:guid}/terminate", Terminate).WithName("TerminateInstance").RequireAuthorization(Policies.Operate)
            .WithSummary("End an instance at once, without its cancel path")
            .ProducesStateChangeProblems(takesBody: true);
        group.MapPost("/{id:guid}/suspend", Suspend).WithName("SuspendInstance").RequireAuthorization(Policies.Operate)
            .WithSummary("Hold a waiting instance: signals and timers are kept, not applied, until it is resumed")
            .ProducesStateChangeProblems(takesBody: true);
        group.MapPost("/{id:guid}/resume", Resume).WithName("ResumeInstance").RequireAuthorization(Policies.Operate)
            .WithSummary("Release a suspended instance; what arrived meanwhile is applied in turn")
            .ProducesStateChangeProblems(takesBody: false);
        group.MapPost("/{id:guid}/signals", Signal).WithName("SendSignal").RequireAuthorization(Policies.RunInstances)
            .WithSummary("Send a signal (optionally delayed by dueAt); a repeated Idempotency-Key returns the first one")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/{id:guid}/signals", Signals).WithName("ListInstanceSignals").RequireAuthorization(Policies.ReadInstances)
            .WithSummary("The instance's signals with their status (pending, parked, handled, unmatched, ...), oldest first, a page at a time")
            .WithDescription(PagedSince("every signal"))
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound);
        return group;
    }

    /// <summary>The change note of a list that was answered whole before it paged.</summary>
    internal static string PagedSince(string whole) =>
        $"Changed: the answer is a page (items, total, next), no longer an array of {whole}. Without limit it holds the first 50; "
        + "pass each page's next as after to read on, until next is null.";

    /// <summary>The answers of an operator's state change: unknown instance, a state that does not allow it, and a bad body.</summary>
    private static RouteHandlerBuilder ProducesStateChangeProblems(this RouteHandlerBuilder endpoint, bool takesBody)
    {
        endpoint.ProducesProblem(StatusCodes.Status404NotFound).ProducesProblem(StatusCodes.Status409Conflict);
        return takesBody
            ? endpoint.ProducesProblem(StatusCodes.Status400BadRequest).ProducesProblem(StatusCodes.Status413PayloadTooLarge)
            : endpoint;
    }

    private static async Task<Results<Created<InstanceView>, Ok<InstanceView>, ValidationProblem, ProblemHttpResult>> Start(
        StartInstanceRequest request,
        [FromHeader(Name = IdempotencyHeader)] string? idempotencyKey,
        WorkflowRuntime runtime,
        ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if (!DefinitionCompiler.IsValidName(request.Definition))
        {
            return Problems.Invalid("definition", "definition must name a published definition");
        }

        if ((InvalidBusinessKey(request.BusinessKey) ?? InvalidIdempotencyKey(idempotencyKey) ?? InvalidVersion(request.Version)) is { } invalid)
        {
            return invalid;
        }

        var result = await runtime.StartAsync(
            new StartRequest(request.Definition, request.Version, Json.Text(request.Input), request.BusinessKey, idempotencyKey, Actor: user.Actor(),
                Tenant: user.Tenant()),
            cancellationToken);
        return result.Outcome switch
        {
            StartOutcome.Created => TypedResults.Created($"/instances/{result.Instance!.Id}", InstanceView.From(result.Instance)),
            StartOutcome.Existing => TypedResults.Ok(InstanceView.From(result.Instance!)),
            _ => Problems.NotFound(request.Version is { } v
                ? $"Definition '{request.Definition}' has no version {v}."
                : $"No definition is named '{request.Definition}'."),
        };
    }

    /// <summary>
    /// A business key outside 1 to 200 characters, or holding a character no CloudEvents string may (a control character,
    /// a noncharacter: events name the key); null when it is valid or left out.
    /// </summary>
    internal static ValidationProblem? InvalidBusinessKey(string? businessKey) => businessKey switch
    {
        { Length: 0 or > 200 } => Problems.Invalid("businessKey", "businessKey must be 1 to 200 characters"),
        not null when !CloudEventBody.IsAttributeText(businessKey) =>
            Problems.Invalid("businessKey", "businessKey must not hold control characters (U+0000 to U+001F, U+007F to U+009F) or noncharacters"),
        _ => null,
    };

    private static ValidationProblem? InvalidIdempotencyKey(string? idempotencyKey) =>
        idempotencyKey is { Length: 0 or > 200 } ? Problems.Invalid(IdempotencyHeader, "Idempotency-Key must be 1 to 200 characters") : null;

    internal static ValidationProblem? InvalidVersion(int? version) =>
        version is <= 0 ? Problems.Invalid("version", "version must be a positive number") : null;

    /// <summary>
    /// A signal name the caller may not send, or a bad Idempotency-Key; null when both are valid. A name may end in
    /// <c>#index</c>: the signal then reaches that item of a forEach step only.
    /// </summary>
    internal static ValidationProblem? InvalidSignal(string? name, string? idempotencyKey) =>
        !ForEachItems.IsSendable(name)
            ? Problems.Invalid("name", "name is required: " + ForEachItems.SendableNameRule)
            : InvalidIdempotencyKey(idempotencyKey);

    private static async Task<Results<Ok<PageView<InstanceSummaryView>>, ValidationProblem>> List(
        [FromKeyedServices(OperatorReads.MayBeStale)] IOperatorQueries store,
        ISearchAttributeStore search,
        IOptions<SearchOptions> searchOptions,
        IOptions<SearchQueryOptions> queryLimits,
        ClaimsPrincipal user,
        CancellationToken cancellationToken,
        string? definition = null,
        InstanceStatus? status = null,
        string? businessKey = null,
        DateTimeOffset? createdFrom = null,
        DateTimeOffset? createdTo = null,
        int offset = 0,
        int limit = 50,
        [Description("The next of the page before (keyset paging: instances that leave the filter meanwhile shift nothing, so none is skipped); not with offset.")]
        string? after = null,
        [Description("Instances matching this filter over search attributes and the instance's own fields (docs/search-language.md), with the parameters above; the total then counts up to Search:MaxTotal.")]
        string? filter = null,
        [Description("One field to sort by: createdAt or a search attribute, asc or desc (default: createdAt desc); sorted by an attribute, only instances with a value of it are listed.")]
        string? orderBy = null)
    {
        if (Problems.InvalidPage(offset, limit) is { } invalid)
        {
            return invalid;
        }

        var tenant = user.Tenant();
        var (searched, refused) = await InstanceSearch.ReadAsync(search, queryLimits.Value, tenant, filter, orderBy, cancellationToken);
        if (refused is not null)
        {
            return refused;
        }

        InstancePosition? position = null;
        if (after is not null)
        {
            if (offset != 0)
            {
                return Problems.Invalid("after", "after and offset cannot be combined: page with after (the next of the page before) alone");
            }

            position = InstanceSearch.Position(after, searched!.Order);
            if (position is null)
            {
                return Problems.InvalidAfter();
            }
        }

        var page = await store.QueryInstancesAsync(
            new InstanceQuery(definition, status, businessKey, createdFrom?.UtcDateTime, createdTo?.UtcDateTime, offset, limit, Tenant: tenant,
                After: position, Filter: searched!.Filter, Order: searched.Order, MaxCounted: searchOptions.Value.MaxTotal),
            cancellationToken);
        var next = page.Items.Count == limit ? InstanceSearch.Cursor(page.Items[^1], searched.Order) : null;
        return TypedResults.Ok(new PageView<InstanceSummaryView>(page.Items.Select(InstanceSummaryView.From).ToList(), page.Total, page.Offset, page.Limit, next));
    }

    private static async Task<Results<Ok<SearchCountsView>, ValidationProblem>> Counts(
        ISearchAttributeStore search,
        IOptions<SearchOptions> searchOptions,
        IOptions<SearchQueryOptions> queryLimits,
        ClaimsPrincipal user,
        CancellationToken cancellationToken,
        [Description("The field to count by: a keyword, number or bool search attribute, or status, definition or businessKey.")]
        string? by = null,
        [Description("Count only the instances matching this filter (as the list's).")]
        string? filter = null,
        [Description("Values to return at most, most frequent first (default and most: Search:MaxCountValues).")]
        int? top = null)
    {
        var limits = searchOptions.Value;
        if (top is < 1 || top > limits.MaxCountValues)
        {
            return Problems.Invalid("top", $"top must be from 1 to {limits.MaxCountValues}");
        }

        var tenant = user.Tenant();
        var fields = Engine.Search.TenantSearchFields.Of(await search.GetSearchAttributesAsync(tenant, cancellationToken));
        if (by is null || !fields.TryGet(by, out var field) || field.Type is SearchValueType.Text or SearchValueType.DateTime
            || (field.BuiltIn && field.Type != SearchValueType.Keyword))
        {
            return Problems.Invalid("by", by is not null && !fields.TryGet(by, out _)
                ? $"'{by}' is not a search attribute of this tenant nor an instance field"
                : "by is required: a keyword, number or bool search attribute, or status, definition or businessKey");
        }

        var (searched, refused) = await InstanceSearch.ReadAsync(search, queryLimits.Value, tenant, filter, null, cancellationToken);
        if (refused is not null)
        {
            return refused;
        }

        var counts = await search.CountBySearchValueAsync(new InstanceQuery(Tenant: tenant, Filter: searched!.Filter), field,
            top ?? limits.MaxCountValues, limits.MaxCounted, cancellationToken);
        return TypedResults.Ok(SearchCountsView.From(by, counts));
    }

    internal static async Task<Results<Ok<InstanceView>, ValidationProblem, ProblemHttpResult>> Get(
        Guid id,
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
        var tenant = user.Tenant();
        if ((waitFor is null or { Length: 0 }) && afterRevision is null)
        {
            return await FoundAsync(id, await store.GetInstanceAsync(tenant, id, cancellationToken), searchValues, cancellationToken);
        }

        if (!LongPoll.TryParse(waitFor, afterRevision, timeout, out var poll, out var invalid))
        {
            return invalid;
        }

        using var slot = gate.TryEnter(CallerLimits.CallerKey(http), out var refusal);
        if (slot is null)
        {
            return TooManyWaiting(http, refusal, rateLimits.Value, poll.Parameter);
        }

        var instance = poll.Statuses is { } statuses
            ? await runtime.WaitForStatusAsync(tenant, id, statuses, poll.Timeout, cancellationToken)
            : await runtime.WaitForChangeAsync(tenant, id, poll.AfterRevision, poll.Timeout, cancellationToken);
        return await FoundAsync(id, instance, searchValues, cancellationToken);
    }

    /// <summary>The instance's view with its search attribute values, or 404.</summary>
    private static async Task<Results<Ok<InstanceView>, ValidationProblem, ProblemHttpResult>> FoundAsync(Guid id, WorkflowInstance? instance,
        InstanceSearchValues searchValues, CancellationToken cancellationToken) =>
        instance is null
            ? Problems.NotFound($"No instance has the id {id}.")
            : TypedResults.Ok(InstanceView.From(instance, await searchValues.ValuesAsync(instance, cancellationToken) ?? instance.SearchAttributes));

    /// <summary>A long-poll refused for want of a slot: this caller's share is taken (429), or the node's (503); retry after a second.</summary>
    private static ProblemHttpResult TooManyWaiting(HttpContext http, LongPollRefusal refusal, RateLimitingOptions limits, string parameter)
    {
        http.Response.Headers.RetryAfter = "1";
        return refusal == LongPollRefusal.CallerFull
            ? TypedResults.Problem(
                $"This caller holds {limits.MaxLongPollsPerCaller} waiting requests on this node, as many as one caller may; retry after one of them ends, or read the instance without {parameter}.",
                statusCode: StatusCodes.Status429TooManyRequests, title: "Too many waiting requests")
            : TypedResults.Problem(
                $"This node holds as many waiting requests as it may; retry shortly, or read the instance without {parameter}.",
                statusCode: StatusCodes.Status503ServiceUnavailable, title: "Too many waiting requests");
    }

    /// <summary>
    /// What a long-poll waits for: one of <see cref="Statuses"/> (waitFor), or a revision after <see cref="AfterRevision"/>
    /// (afterRevision), for at most <see cref="Timeout"/>.
    /// </summary>
    private sealed record LongPoll(string Parameter, IReadOnlySet<InstanceStatus>? Statuses, int AfterRevision, TimeSpan Timeout)
    {
        /// <summary>The longest wait a request may ask for; the runtime bounds it further (Worker:MaxLongPoll).</summary>
        private const double MaxSeconds = 3600;

        /// <summary>The long-poll the query asks for; else the problem that names the parameter at fault, checked in this order.</summary>
        public static bool TryParse(string[]? waitFor, int? afterRevision, double? timeout, [NotNullWhen(true)] out LongPoll? poll,
            [NotNullWhen(false)] out ValidationProblem? invalid)
        {
            IReadOnlySet<InstanceStatus>? statuses = null;
            var parameter = afterRevision is null ? WaitForParameter.Name : "afterRevision";
            invalid = waitFor is { Length: > 0 } && afterRevision is not null
                ? Problems.Invalid("afterRevision", "waitFor and afterRevision: give one of them, not both")
                : afterRevision is < 0
                    ? Problems.Invalid("afterRevision", $"afterRevision: expected a revision (0 or more), got {afterRevision}")
                    : afterRevision is null && !WaitForParameter.TryParse(waitFor!, out statuses, out var error)
                        ? Problems.Invalid(WaitForParameter.Name, error)
                        : timeout is not { } seconds || seconds < 0 || double.IsNaN(seconds)
                            ? Problems.Invalid("timeout", $"with {parameter}, timeout (seconds, at least 0) is required")
                            : null;
            poll = invalid is null
                ? new LongPoll(parameter, statuses, afterRevision ?? 0, TimeSpan.FromSeconds(Math.Min(timeout!.Value, MaxSeconds)))
                : null;
            return invalid is null;
        }
    }

    private static async Task<Results<Ok<PageView<HistoryEventView>>, ValidationProblem, ProblemHttpResult>> History(
        Guid id, IInstanceStore store, ClaimsPrincipal user, CancellationToken cancellationToken, int limit = 50, string? after = null)
    {
        if (Problems.InvalidPage(0, limit) is { } invalid)
        {
            return invalid;
        }

        int? position = null;
        if (after is not null && (position = ListCursor.DecodeHistory(after)) is null)
        {
            return Problems.InvalidAfter();
        }

        if (await store.GetInstanceAsync(user.Tenant(), id, cancellationToken) is not { } instance)
        {
            return Problems.NotFound($"No instance has the id {id}.");
        }

        var page = await store.GetHistoryAsync(instance, position, limit, cancellationToken);
        return TypedResults.Ok(PageView<HistoryEventView>.Of(page, limit, HistoryEventView.From, e => ListCursor.EncodeHistory(e.Sequence)));
    }

    private static Task<Results<Ok<InstanceView>, ProblemHttpResult>> Cancel(
        Guid id, InstanceActionRequest? request, WorkflowRuntime runtime, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        ChangeStateAsync(id, runtime.CancelAsync(user.Tenant(), id, request?.Reason, user.Actor(), cancellationToken), "it already ended");

    private static Task<Results<Ok<InstanceView>, ProblemHttpResult>> Terminate(
        Guid id, InstanceActionRequest? request, WorkflowRuntime runtime, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        ChangeStateAsync(id, runtime.TerminateAsync(user.Tenant(), id, request?.Reason, user.Actor(), cancellationToken), "it already ended");

    private static Task<Results<Ok<InstanceView>, ProblemHttpResult>> Suspend(
        Guid id, InstanceActionRequest? request, WorkflowRuntime runtime, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        ChangeStateAsync(id, runtime.SuspendAsync(user.Tenant(), id, request?.Reason, user.Actor(), cancellationToken), "only a waiting instance can be suspended");

    private static Task<Results<Ok<InstanceView>, ProblemHttpResult>> Resume(
        Guid id, WorkflowRuntime runtime, ClaimsPrincipal user, CancellationToken cancellationToken) =>
        ChangeStateAsync(id, runtime.ResumeAsync(user.Tenant(), id, user.Actor(), cancellationToken), "only a suspended instance can be resumed");

    private static async Task<Results<Ok<InstanceView>, ProblemHttpResult>> ChangeStateAsync(
        Guid id, Task<StateChangeResult> change, string whyNot)
    {
        var result = await change;
        return result.Outcome switch
        {
            StateChangeOutcome.Changed => TypedResults.Ok(InstanceView.From(result.Instance!)),
            StateChangeOutcome.NotAllowed => Problems.Conflict($"Instance {id} is {result.Instance!.Status}: {whyNot}."),
            _ => Problems.NotFound($"No instance has the id {id}."),
        };
    }

    internal static async Task<Results<Accepted<SignalView>, Ok<SignalView>, ValidationProblem, ProblemHttpResult>> Signal(
        Guid id,
        SendSignalRequest request,
        [FromHeader(Name = IdempotencyHeader)] string? idempotencyKey,
        WorkflowRuntime runtime,
        ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if (InvalidSignal(request.Name, idempotencyKey) is { } invalid)
        {
            return invalid;
        }

        var result = await runtime.SignalAsync(
            new SignalRequest(id, request.Name, Json.Text(request.Payload), request.DueAt, idempotencyKey, user.Actor(), user.Tenant()),
            cancellationToken);
        return result.Outcome switch
        {
            // 202 either way; the signal's status says which: Handled (applied at once by this node) or Pending (queued).
            SignalOutcome.Applied or SignalOutcome.Accepted => TypedResults.Accepted($"/instances/{id}/signals", SignalView.From(result.Signal!)),
            SignalOutcome.Duplicate => TypedResults.Ok(SignalView.From(result.Signal!)),
            SignalOutcome.InstanceEnded => Problems.Conflict($"Instance {id} already ended as {result.Instance!.Status}; it takes no more signals."),
            _ => Problems.NotFound($"No instance has the id {id}."),
        };
    }

    private static async Task<Results<Ok<PageView<SignalView>>, ValidationProblem, ProblemHttpResult>> Signals(
        Guid id, IInstanceStore store, IOperatorQueries queries, ClaimsPrincipal user, CancellationToken cancellationToken, int limit = 50,
        string? after = null)
    {
        if (Problems.InvalidPage(0, limit) is { } invalid)
        {
            return invalid;
        }

        SignalPosition? position = null;
        if (after is not null && (position = ListCursor.DecodeSignal(after)) is null)
        {
            return Problems.InvalidAfter();
        }

        if (await store.GetInstanceAsync(user.Tenant(), id, cancellationToken) is not { } instance)
        {
            return Problems.NotFound($"No instance has the id {id}.");
        }

        var page = await queries.ListSignalsAsync(instance, position, limit, cancellationToken);
        return TypedResults.Ok(PageView<SignalView>.Of(page, limit, SignalView.From, s => ListCursor.Encode(SignalPosition.Of(s))));
    }
}
