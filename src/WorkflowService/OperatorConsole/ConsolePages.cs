using System.Globalization;
using Microsoft.AspNetCore.Components;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using WorkflowService.Api;
using WorkflowService.Diagrams;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.OperatorConsole.Pages;
using WorkflowService.Security;

namespace WorkflowService.OperatorConsole;

/// <summary>The console's pages (GET): each reads what it shows through the engine's own services, in the caller's tenant.</summary>
public static class ConsolePages
{
    public static IEndpointRouteBuilder MapConsolePages(this IEndpointRouteBuilder routes)
    {
        // Signed-in callers only (the sign-in gate sends the others to the sign-in page); each page then checks its own policy.
        var group = routes.MapGroup(ConsolePaths.Root).ExcludeFromDescription().RequireAuthorization(Policies.Console);
        group.MapGet("/", () => TypedResults.Redirect(ConsolePaths.Instances));
        group.MapGet("/sign-in", SignInForm).AllowAnonymous();
        group.MapGet("/instances", Instances);
        group.MapGet("/instances/{id:guid}", Instance);
        group.MapGet("/live/instances/{id:guid}", Live).WithRequestTimeout(StoreUnavailable.LongPollPolicy);
        group.MapGet("/definitions", Definitions);
        group.MapGet("/definitions/{name}", Definition);
        group.MapGet("/dead-letters", DeadLetters);
        group.MapGet("/tasks", Tasks);
        group.MapGet("/subscriptions", Subscriptions);
        group.MapGet("/subscriptions/{id:guid}", Subscription);
        group.MapGet("/subscriptions/{id:guid}/deliveries", Deliveries);
        group.MapSchedulePages();
        group.MapGet("/assets/{file}", Asset).AllowAnonymous();
        return routes;
    }

    internal static RazorComponentResult Page<TPage>(object model, int statusCode = StatusCodes.Status200OK) where TPage : IComponent =>
        new RazorComponentResult<TPage>(new { Model = model }) { StatusCode = statusCode };

    internal static RazorComponentResult Message(ConsoleCaller? caller, string title, string message, int statusCode) =>
        Page<MessagePage>(new MessageModel(caller, title, message), statusCode);

    internal static RazorComponentResult Refused(ConsoleCaller caller, string what) =>
        Message(caller, "Not allowed", $"Your credentials do not allow {what}. Ask an administrator for a role that does.", StatusCodes.Status403Forbidden);

    private static RazorComponentResult SignInForm(IOptions<AuthenticationSettings> authentication, IOptions<ConsoleOptions> options,
        string? returnUrl = null, string? expired = null, string? rejected = null, string? failed = null)
    {
        var message = rejected is not null ? "That key or token was not accepted."
            : failed is not null ? "Signing in at your organisation's identity provider did not succeed; try again, or paste a key or token."
            : expired is not null ? "Your sign-in has ended or was not accepted; sign in again."
            : null;
        return Page<SignInPage>(new SignInModel(ConsolePaths.IsLocal(returnUrl) ? returnUrl! : ConsolePaths.Instances, message,
            authentication.Value.Jwt.IsConfigured, options.Value.OpenIdConnect.IsConfigured));
    }

    private static async Task<RazorComponentResult> Instances(
        HttpContext http, [FromKeyedServices(OperatorReads.MayBeStale)] IOperatorQueries queries, IDefinitionStore definitions, IOptions<ConsoleOptions> options, CancellationToken cancellationToken,
        string? definition = null, string? status = null, string? businessKey = null, string? createdFrom = null, string? createdTo = null,
        string? after = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ReadInstances)
        {
            return Refused(caller, "reading instances");
        }

        var errors = new List<string>();
        InstanceStatus? statusFilter = null;
        if (!string.IsNullOrEmpty(status))
        {
            if (Enum.TryParse<InstanceStatus>(status, ignoreCase: true, out var parsed) && !int.TryParse(status, out _))
            {
                statusFilter = parsed;
            }
            else
            {
                errors.Add($"Status '{status}' is not one of {string.Join(", ", Enum.GetNames<InstanceStatus>())}.");
            }
        }

        var from = ParseTime(createdFrom, "Created from", errors);
        var to = ParseTime(createdTo, "Created before", errors);
        var filter = new InstanceFilter(Blank(definition), statusFilter, Blank(businessKey), from, to, Blank(after));
        InstancePosition? position = null;
        if (filter.After is { } cursor && (position = ListCursor.Decode(cursor)) is null)
        {
            errors.Add("That page link is not one this console made; start again from the first page.");
        }

        var size = options.Value.PageSize;
        var query = new InstanceQuery(filter.Definition, filter.Status, filter.BusinessKey, from, to, Limit: size, Tenant: caller.Tenant, After: position);
        var names = caller.ReadDefinitions
            ? (await definitions.ListDefinitionsAsync(caller.Tenant, cancellationToken)).Select(d => d.Name).ToList()
            : [];
        if (errors.Count > 0)
        {
            return Page<InstancesPage>(new InstancesModel(caller, filter, new Page<WorkflowInstance>([], 0, 0, size),
                new Dictionary<InstanceStatus, long>(), null, names, string.Join(" ", errors)), StatusCodes.Status400BadRequest);
        }

        var page = await queries.QueryInstancesAsync(query, cancellationToken);
        var counts = await queries.CountInstancesByStatusAsync(query, cancellationToken);
        var next = page.Items.Count == size ? ListCursor.Encode(InstancePosition.Of(page.Items[^1])) : null;
        return Page<InstancesPage>(new InstancesModel(caller, filter, page, counts, next, names, null));
    }

    private static async Task<RazorComponentResult> Instance(
        Guid id, HttpContext http, IInstanceStore store, IOperatorQueries queries, IDefinitionStore definitions, DefinitionRegistry registry,
        DiagramRenderer renderer, TaskInbox inbox, IOptions<ConsoleOptions> options, CancellationToken cancellationToken, string? done = null,
        string? history = null, string? signals = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ReadInstances)
        {
            return Refused(caller, "reading instances");
        }

        int? historyAfter = null;
        SignalPosition? signalsAfter = null;
        if ((history is not null && (historyAfter = ListCursor.DecodeHistory(history)) is null)
            || (signals is not null && (signalsAfter = ListCursor.DecodeSignal(signals)) is null))
        {
            return NotAPageLink(caller);
        }

        var instance = await store.GetInstanceAsync(caller.Tenant, id, cancellationToken);
        if (instance is null)
        {
            return Message(caller, "No such instance", $"No instance has the id {id}.", StatusCodes.Status404NotFound);
        }

        // The diagram is drawn from the whole history, read once; the page lists one page of it, and of the signals.
        var events = await store.GetHistoryAsync(instance, cancellationToken);
        var size = options.Value.PageSize;
        var historyPage = KeysetPage.After(events, historyAfter, size, instance.HistoryLength);
        var signalsPage = await queries.ListSignalsAsync(instance, signalsAfter, size, cancellationToken);
        var compiled = await registry.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken);
        var diagram = compiled is null ? null : renderer.RenderInstance(compiled, instance, events);
        var tasks = await inbox.QueryAsync(new TaskQuery(InstanceId: id, Limit: 200, Tenant: caller.Tenant), cancellationToken);
        // Children are looked up only for an instance that started some (the parent column is not indexed).
        var children = events.Any(h => h.Type == HistoryEventTypes.SubWorkflowStarted)
            ? await queries.QueryInstancesAsync(new InstanceQuery(Limit: 50, Tenant: caller.Tenant, ParentId: id), cancellationToken)
            : new Page<WorkflowInstance>([], 0, 0, 50);
        var versions = caller.Operate
            ? LatestVersions(await definitions.GetDefinitionAsync(caller.Tenant, instance.DefinitionName, null, cancellationToken))
            : [];
        // Sequences run from 0 without gaps, so the last page starts after the event a page before the end.
        var lastHistory = historyPage.More ? ListCursor.EncodeHistory(historyPage.Total - size - 1) : null;
        return Page<InstancePage>(new InstanceModel(caller, instance, diagram,
            Cursors(historyPage, history, h => ListCursor.EncodeHistory(h.Sequence), lastHistory),
            Cursors(signalsPage, signals, s => ListCursor.Encode(SignalPosition.Of(s))),
            tasks.Items, children, versions, Done(done)));
    }

    /// <summary>A page read by position, with the cursor it was read after and its next page's.</summary>
    internal static CursorList<T> Cursors<T>(KeysetPage<T> page, string? after, Func<T, string> cursor, string? last = null) =>
        new(page.Items, page.Total, after, page.More ? cursor(page.Items[^1]) : null, last);

    internal static RazorComponentResult NotAPageLink(ConsoleCaller caller) =>
        Message(caller, "Not a page link", "That page link is not one this console made; start again from the first page.", StatusCodes.Status400BadRequest);

    /// <summary>The versions a migration may target: a definition's versions are numbered 1 to its latest (one row read, not every version's JSON).</summary>
    private static List<int> LatestVersions(DefinitionRecord? latest) => latest is null ? [] : [.. Enumerable.Range(1, latest.Version)];

    /// <summary>
    /// Waits (bounded by Console:LiveWait) until the instance commits a version after <paramref name="version"/>: what an
    /// open instance page asks, to redraw itself without a reload.
    /// </summary>
    private static async Task<IResult> Live(
        Guid id, int version, HttpContext http, WorkflowRuntime runtime, LongPollGate gate, IOptions<ConsoleOptions> options,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ReadInstances)
        {
            return TypedResults.StatusCode(StatusCodes.Status403Forbidden);
        }

        using var slot = gate.TryEnter(CallerLimits.CallerKey(http), out var refusal);
        if (slot is null)
        {
            // As GET /instances/{id}?waitFor= answers: this caller's share is taken (429), or the node's (503).
            http.Response.Headers.RetryAfter = "5";
            return TypedResults.StatusCode(refusal == LongPollRefusal.CallerFull ? StatusCodes.Status429TooManyRequests : StatusCodes.Status503ServiceUnavailable);
        }

        var instance = await runtime.WaitForChangeAsync(caller.Tenant, id, version, options.Value.LiveWait, cancellationToken);
        return instance is null
            ? TypedResults.NotFound()
            : TypedResults.Ok(new LiveChange(instance.Version, instance.Status.ToString(), instance.Status.IsTerminal()));
    }

    private static async Task<RazorComponentResult> Definitions(HttpContext http, IDefinitionStore store, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        return caller.ReadDefinitions
            ? Page<DefinitionsPage>(new DefinitionsModel(caller, await store.ListDefinitionsAsync(caller.Tenant, cancellationToken)))
            : Refused(caller, "reading definitions");
    }

    private static async Task<RazorComponentResult> Definition(
        string name, HttpContext http, IDefinitionStore store, DefinitionRegistry registry, DiagramRenderer renderer, IOptions<ConsoleOptions> options,
        CancellationToken cancellationToken, int? version = null, int? compare = null, string? versions = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ReadDefinitions)
        {
            return Refused(caller, "reading definitions");
        }

        int? after = null;
        if (versions is not null && (after = ListCursor.DecodeVersion(versions)) is null)
        {
            return NotAPageLink(caller);
        }

        // One page of the version list; the versions shown and compared are read one by one.
        var page = await store.ListDefinitionVersionsAsync(caller.Tenant, name, after, options.Value.PageSize, cancellationToken);
        var selected = page.Total == 0 ? null : await store.GetDefinitionAsync(caller.Tenant, name, version, cancellationToken);
        if (selected is null)
        {
            return Message(caller, "No such definition",
                version is null || page.Total == 0 ? $"No definition is named '{name}'." : $"Definition '{name}' has no version {version}.",
                StatusCodes.Status404NotFound);
        }

        var compiled = await registry.GetAsync(caller.Tenant, name, selected.Version, cancellationToken);
        var json = ConsoleFormat.Json(selected.Json);
        var other = compare is { } c ? await store.GetDefinitionAsync(caller.Tenant, name, c, cancellationToken) : null;
        var diff = other is null ? null : DefinitionDiff.Of(ConsoleFormat.Json(other.Json), json);
        return Page<DefinitionPage>(new DefinitionModel(caller, name, Cursors(page, versions, d => ListCursor.EncodeVersion(d.Version)), selected,
            page.Total, compiled is null ? null : renderer.RenderDefinition(compiled), json, other?.Version, diff));
    }

    private static async Task<RazorComponentResult> DeadLetters(
        HttpContext http, DeadLetterQueue deadLetters, IOptions<ConsoleOptions> options, CancellationToken cancellationToken, int offset = 0,
        string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.Operate)
        {
            return Refused(caller, "seeing dead letters");
        }

        var page = await deadLetters.ListAsync(caller.Tenant, Math.Max(0, offset), options.Value.PageSize, cancellationToken);
        return Page<DeadLettersPage>(new DeadLettersModel(caller, page, Done(done)));
    }

    private static async Task<RazorComponentResult> Tasks(
        HttpContext http, TaskInbox inbox, IOptions<AuthenticationSettings> authentication, IOptions<ConsoleOptions> options,
        CancellationToken cancellationToken, string? status = null, int offset = 0, string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        HumanTaskStatus? filter = null;
        if (!string.IsNullOrEmpty(status))
        {
            if (!Enum.TryParse<HumanTaskStatus>(status, ignoreCase: true, out var parsed) || int.TryParse(status, out _))
            {
                return Page<TasksPage>(new TasksModel(caller, null, new Page<HumanTask>([], 0, 0, options.Value.PageSize), new HashSet<Guid>(), null,
                    $"Status '{status}' is not one of {string.Join(", ", Enum.GetNames<HumanTaskStatus>())}."), StatusCodes.Status400BadRequest);
            }

            filter = parsed;
        }

        // As the API's inbox: callers who read instances see every task; a task user sees those they may work.
        var taskCaller = TaskCaller.Of(http.User, authentication.Value);
        var candidateOnly = taskCaller.ReadsEverything ? null : taskCaller.Candidate ?? new TaskCandidate("", []);
        var page = await inbox.QueryAsync(new TaskQuery(Status: filter, Offset: Math.Max(0, offset), Limit: options.Value.PageSize,
            CandidateOnly: candidateOnly, Tenant: caller.Tenant), cancellationToken);
        var workable = page.Items.Where(taskCaller.MayWork).Select(t => t.Id).ToHashSet();
        return Page<TasksPage>(new TasksModel(caller, filter, page, workable, Done(done), null));
    }

    private static async Task<RazorComponentResult> Subscriptions(
        HttpContext http, ISubscriptionStore store, IOptions<ConsoleOptions> options, CancellationToken cancellationToken, string? after = null,
        string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return Refused(caller, "managing subscriptions");
        }

        string? position = null;
        if (after is not null && (position = ListCursor.DecodeName(after)) is null)
        {
            return NotAPageLink(caller);
        }

        var list = await SubscriptionListAsync(caller, store, position, after, options.Value.PageSize, cancellationToken);
        return Page<SubscriptionsPage>(new SubscriptionsModel(caller, list, SubscriptionForm.Empty, null, null, Done(done), null));
    }

    /// <summary>One page of the caller's tenant's subscriptions, by name.</summary>
    internal static async Task<CursorList<Subscription>> SubscriptionListAsync(
        ConsoleCaller caller, ISubscriptionStore store, string? position, string? after, int size, CancellationToken cancellationToken) =>
        Cursors(await store.ListSubscriptionsAsync(caller.Tenant, position, size, cancellationToken), after, s => ListCursor.EncodeName(s.Name));

    private static async Task<RazorComponentResult> Subscription(
        Guid id, HttpContext http, ISubscriptionStore store, CancellationToken cancellationToken, string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return Refused(caller, "managing subscriptions");
        }

        return await store.GetSubscriptionAsync(caller.Tenant, id, cancellationToken) is { } subscription
            ? Page<SubscriptionPage>(new SubscriptionModel(caller, subscription, SubscriptionForm.Of(subscription), null, Done(done), null))
            : NoSuchSubscription(caller, id);
    }

    private static async Task<RazorComponentResult> Deliveries(
        Guid id, HttpContext http, ISubscriptionStore store, IDeliveryQueue deliveries, IOptions<ConsoleOptions> options,
        CancellationToken cancellationToken, string? after = null, string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return Refused(caller, "managing subscriptions");
        }

        long? position = null;
        if (after is not null && (position = ListCursor.DecodeDelivery(after)) is null)
        {
            return NotAPageLink(caller);
        }

        if (await store.GetSubscriptionAsync(caller.Tenant, id, cancellationToken) is not { } subscription)
        {
            return NoSuchSubscription(caller, id);
        }

        var page = await deliveries.ListDeliveriesAsync(caller.Tenant, id, null, position, options.Value.PageSize, cancellationToken);
        return Page<DeliveriesPage>(new DeliveriesModel(caller, subscription, Cursors(page, after, d => ListCursor.EncodeDelivery(d.Sequence)), Done(done)));
    }

    internal static RazorComponentResult NoSuchSubscription(ConsoleCaller caller, Guid id) =>
        Message(caller, "No such subscription", SubscriptionEndpoints.NotFoundMessage(id), StatusCodes.Status404NotFound);

    /// <summary>The style sheet and script, read from the assembly once, each with the tag of its content.</summary>
    private static readonly Dictionary<string, (byte[] Content, string Type, string Tag)> Assets = LoadAssets();

    private static Dictionary<string, (byte[] Content, string Type, string Tag)> LoadAssets()
    {
        var assets = new Dictionary<string, (byte[], string, string)>(StringComparer.Ordinal);
        var self = typeof(ConsolePages).Assembly;
        foreach (var (file, type) in new[] { ("console.css", "text/css; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8") })
        {
            using var stream = self.GetManifestResourceStream($"console/{file}")
                               ?? throw new InvalidOperationException($"the console's {file} is not embedded in the assembly");
            using var buffer = new MemoryStream();
            stream.CopyTo(buffer);
            var content = buffer.ToArray();
            assets[file] = (content, type, $"\"{Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(content))[..16]}\"");
        }

        return assets;
    }

    private static IResult Asset(string file, HttpContext http)
    {
        if (!Assets.TryGetValue(file, out var asset))
        {
            return TypedResults.NotFound();
        }

        // Revalidated on each page (a new release's file is never stale), answered 304 while it is unchanged.
        http.Response.Headers.CacheControl = "no-cache";
        http.Response.Headers.ETag = asset.Tag;
        return http.Request.Headers.IfNoneMatch.Contains(asset.Tag)
            ? TypedResults.StatusCode(StatusCodes.Status304NotModified)
            : TypedResults.Bytes(asset.Content, asset.Type);
    }

    /// <summary>What the last action did, said on the page it returned to.</summary>
    internal static string? Done(string? done) => done switch
    {
        "signal" => "Signal sent.",
        "cancel" => "Cancel requested: the definition's cancel path runs.",
        "terminate" => "Instance terminated.",
        "suspend" => "Instance suspended.",
        "resume" => "Instance resumed.",
        "migrate" => "Instance migrated.",
        "replay" => "Dead letter replayed: the signal is queued again.",
        "claim" => "Task claimed.",
        "complete" => "Task completed.",
        "changed" => "Subscription changed.",
        "paused" => "Subscription paused: its events are recorded and wait for a resume.",
        "resumed" => "Subscription resumed: the events that waited go out first.",
        "deleted" => "Subscription deleted.",
        "redelivered" => "Delivery replayed: it is pending again.",
        "schedule-created" => "Schedule created.",
        "schedule-changed" => "Schedule changed: its calendar starts again from now.",
        "schedule-paused" => "Schedule paused: no occurrence starts until it is resumed.",
        "schedule-resumed" => "Schedule resumed from now: what fell due while it was paused does not run.",
        "schedule-deleted" => "Schedule deleted; the instances it started stay.",
        "triggered" => "Occurrence triggered: the recent actions say what it did.",
        "backfilled" => "Range backfilled: the recent actions say what each occurrence did.",
        _ => null,
    };

    private static string? Blank(string? value) => string.IsNullOrWhiteSpace(value) ? null : value.Trim();

    private static DateTime? ParseTime(string? text, string field, List<string> errors)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return null;
        }

        string[] formats = ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFF", "yyyy-MM-dd"];
        if (DateTime.TryParseExact(text.Trim(), formats, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var at))
        {
            return at;
        }

        errors.Add($"{field} '{text}' is not a date and time such as 2026-11-25T09:30.");
        return null;
    }
}

/// <summary>What an open instance page learns from /console/live: the committed version, the status, and whether it can still change.</summary>
public sealed record LiveChange(int Version, string Status, bool Final);
