using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;
using WorkflowService.Api;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;
using WorkflowService.OperatorConsole.Pages;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// The console's schedule pages and forms: each goes through the API's own registry calls and words, in the caller's
/// tenant, for callers the schedules.manage policy admits (designers and admins). Every action is confirmed first.
/// </summary>
public static class ConsoleSchedules
{
    private static readonly string[] Actions = ["pause", "resume", "trigger", "backfill", "delete"];

    internal static RouteGroupBuilder MapSchedulePages(this RouteGroupBuilder group)
    {
        group.MapGet("/schedules", List);
        group.MapGet("/schedules/{id:guid}", Show);
        return group;
    }

    internal static RouteGroupBuilder MapScheduleActions(this RouteGroupBuilder group)
    {
        group.MapPost("/schedules", Create);
        group.MapPost("/schedules/{id:guid}", Change);
        group.MapPost("/schedules/{id:guid}/confirm", Confirm);
        group.MapPost("/schedules/{id:guid}/{action}", Take);
        return group;
    }

    private static async Task<RazorComponentResult> List(
        HttpContext http, IScheduleStore store, IOptions<ScheduleOptions> schedules, IOptions<ConsoleOptions> options, CancellationToken cancellationToken,
        string? after = null, string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        string? position = null;
        if (after is not null && (position = ListCursor.DecodeName(after)) is null)
        {
            return ConsolePages.NotAPageLink(caller);
        }

        var list = await ListAsync(caller, store, schedules.Value, position, after, options.Value.PageSize, cancellationToken);
        return ConsolePages.Page<SchedulesPage>(new SchedulesModel(caller, list, ScheduleForm.Empty, [], ConsolePages.Done(done), null));
    }

    private static async Task<RazorComponentResult> Show(
        Guid id, HttpContext http, IScheduleStore store, IOptions<ScheduleOptions> schedules, CancellationToken cancellationToken, string? done = null)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        return await ViewAsync(caller, store, schedules.Value, id, cancellationToken) is { } schedule
            ? ConsolePages.Page<SchedulePage>(new ScheduleModel(caller, schedule, ScheduleForm.Of(schedule), [], ConsolePages.Done(done), null))
            : NoSuchSchedule(caller, id);
    }

    private static async Task<IResult> Create(
        [FromForm] ScheduleForm form, [FromForm] bool? paused, HttpContext http, ScheduleRegistry registry, IScheduleStore store,
        IOptions<ScheduleOptions> schedules, IOptions<ConsoleOptions> options, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        var (spec, problems) = form.ToSpec();
        var change = spec is null ? ScheduleChange.Invalid([.. problems]) : await registry.CreateAsync(caller.Tenant, spec, paused != true, cancellationToken);
        if (change.Schedule is { } created)
        {
            return ConsoleActions.Done(ConsolePaths.Schedule(created.Id), "schedule-created");
        }

        // The form comes back as it was typed, with the API's words for what is wrong with it.
        var list = await ListAsync(caller, store, schedules.Value, null, null, options.Value.PageSize, cancellationToken);
        return ConsolePages.Page<SchedulesPage>(new SchedulesModel(caller, list, form, change.Problems, null,
            ScheduleEndpoints.Refusal(change, form.Name)), StatusOf(change));
    }

    private static async Task<IResult> Change(
        Guid id, [FromForm] ScheduleForm form, HttpContext http, ScheduleRegistry registry, IScheduleStore store, IOptions<ScheduleOptions> schedules,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        var (spec, problems) = form.ToSpec();
        var change = spec is null ? ScheduleChange.Invalid([.. problems]) : await registry.ReplaceAsync(caller.Tenant, id, spec, cancellationToken);
        if (change.Schedule is not null)
        {
            return ConsoleActions.Done(ConsolePaths.Schedule(id), "schedule-changed");
        }

        return await ViewAsync(caller, store, schedules.Value, id, cancellationToken) is { } schedule
            ? ConsolePages.Page<SchedulePage>(new ScheduleModel(caller, schedule, form, change.Problems, null,
                ScheduleEndpoints.Refusal(change, form.Name, id)), StatusOf(change))
            : NoSuchSchedule(caller, id);
    }

    private static async Task<IResult> Confirm(
        Guid id, [FromForm] string? action, [FromForm] string? from, [FromForm] string? to, [FromForm] ScheduleOverlap? overlapPolicy, HttpContext http,
        IScheduleStore store, IOptions<ScheduleOptions> schedules, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        if (action is null || !Actions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on a schedule.", StatusCodes.Status400BadRequest);
        }

        if (await ViewAsync(caller, store, schedules.Value, id, cancellationToken) is not { } schedule)
        {
            return NoSuchSchedule(caller, id);
        }

        List<KeyValuePair<string, string>> fields = [];
        List<KeyValuePair<string, string>> details =
        [
            new("Schedule", schedule.Name),
            new("Definition", schedule.Version is { } v ? $"{schedule.Definition} v{v}" : $"{schedule.Definition} (latest)"),
            new("Calendar", Calendar(schedule)),
            new("State", schedule.Status == ScheduleView.Paused ? $"paused ({schedule.PausedReason})" : schedule.Status),
        ];
        if (action == "backfill")
        {
            if (Range(from, to) is not { } range)
            {
                return BackfillRefused(caller, schedule, from, to, RangeProblems(from, to));
            }

            details.Add(new("From (UTC)", ConsoleFormat.Iso(range.From)));
            details.Add(new("To (UTC)", ConsoleFormat.Iso(range.To)));
            details.Add(new("Overlap policy", overlapPolicy?.ToString() ?? $"the schedule's ({schedule.OverlapPolicy})"));
            fields = [new("from", from!.Trim()), new("to", to!.Trim())];
            if (overlapPolicy is { } chosen)
            {
                fields.Add(new("overlapPolicy", chosen.ToString()));
            }
        }

        var (title, question, label, dangerous) = action switch
        {
            "pause" => ("Pause a schedule", "Pause this schedule? No occurrence starts until it is resumed.", "Pause", false),
            "resume" => ("Resume a schedule", "Resume this schedule from now? What fell due while it was paused does not run.", "Resume", false),
            "trigger" => ("Trigger a schedule", $"Start an occurrence of this schedule now, whatever its calendar says? Its overlap policy ({schedule.OverlapPolicy}) decides it.", "Trigger now", false),
            "backfill" => ("Backfill a range", "Start every occurrence of the calendar in this range, oldest first, as the overlap policy decides? One that already ran is found, not started again.",
                "Backfill", false),
            _ => ("Delete a schedule", "Delete this schedule? The instances it started stay. This cannot be undone.", "Delete", true),
        };
        var back = ConsolePaths.Schedule(id);
        return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, title, question, $"{back}/{action}", label, back, dangerous, details, fields));
    }

    private static async Task<IResult> Take(
        Guid id, string action, [FromForm] string? from, [FromForm] string? to, [FromForm] ScheduleOverlap? overlapPolicy, HttpContext http,
        ScheduleRegistry registry, IScheduleStore store, IOptions<ScheduleOptions> schedules, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSchedules)
        {
            return Refused(caller);
        }

        if (!Actions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on a schedule.", StatusCodes.Status404NotFound);
        }

        if (action == "delete")
        {
            return await registry.DeleteAsync(caller.Tenant, id, cancellationToken)
                ? ConsoleActions.Done(ConsolePaths.Schedules, "schedule-deleted")
                : NoSuchSchedule(caller, id);
        }

        if (action == "backfill" && Range(from, to) is null)
        {
            return await ViewAsync(caller, store, schedules.Value, id, cancellationToken) is { } schedule
                ? BackfillRefused(caller, schedule, from, to, RangeProblems(from, to))
                : NoSuchSchedule(caller, id);
        }

        var change = action switch
        {
            // As the API words a pause without a reason: who paused it.
            "pause" => await registry.PauseAsync(caller.Tenant, id, caller.Name is { } by ? $"paused by {by}" : "paused", cancellationToken),
            "resume" => await registry.ResumeAsync(caller.Tenant, id, cancellationToken),
            "trigger" => (await registry.TriggerAsync(caller.Tenant, id, null, cancellationToken)).Change,
            _ => (await registry.BackfillAsync(caller.Tenant, id, Range(from, to)!.Value.From, Range(from, to)!.Value.To, overlapPolicy, cancellationToken))
                .Change,
        };
        if (change.Schedule is not null)
        {
            return ConsoleActions.Done(ConsolePaths.Schedule(id), action switch
            {
                "pause" => "schedule-paused",
                "resume" => "schedule-resumed",
                "trigger" => "triggered",
                _ => "backfilled",
            });
        }

        if (change.Outcome == ScheduleChangeOutcome.NotFound || await ViewAsync(caller, store, schedules.Value, id, cancellationToken) is not { } current)
        {
            return NoSuchSchedule(caller, id);
        }

        return action == "backfill"
            ? BackfillRefused(caller, current, from, to, change.Problems, ScheduleEndpoints.Refusal(change, null, id), StatusOf(change))
            : ConsolePages.Message(caller, "Not changed", ScheduleEndpoints.Refusal(change, null, id), StatusOf(change));
    }

    /// <summary>One page of the caller's tenant's schedules, by name, as the API shows each.</summary>
    private static async Task<CursorList<ScheduleView>> ListAsync(
        ConsoleCaller caller, IScheduleStore store, ScheduleOptions options, string? position, string? after, int size, CancellationToken cancellationToken)
    {
        var page = await store.ListSchedulesAsync(caller.Tenant, position, size, cancellationToken);
        var views = new KeysetPage<ScheduleView>([.. page.Items.Select(s => ScheduleView.From(s, options.NextFireTimesShown))], page.Total, page.More);
        return ConsolePages.Cursors(views, after, s => ListCursor.EncodeName(s.Name));
    }

    private static async Task<ScheduleView?> ViewAsync(
        ConsoleCaller caller, IScheduleStore store, ScheduleOptions options, Guid id, CancellationToken cancellationToken) =>
        await store.GetScheduleAsync(caller.Tenant, id, cancellationToken) is { } schedule ? ScheduleView.From(schedule, options.NextFireTimesShown) : null;

    /// <summary>The calendar in one line: the cron expression and its zone, or the interval.</summary>
    public static string Calendar(ScheduleView s) => s.Cron is { } cron ? $"{cron} ({s.TimeZone})" : $"every {s.IntervalSeconds} s";

    private static (DateTime From, DateTime To)? Range(string? from, string? to)
    {
        var problems = new List<Diagnostic>();
        return (ScheduleForm.At(from, "from", problems), ScheduleForm.At(to, "to", problems)) is ({ } start, { } end) ? (start, end) : null;
    }

    private static List<Diagnostic> RangeProblems(string? from, string? to)
    {
        var problems = new List<Diagnostic>();
        foreach (var (text, field) in new[] { (from, "from"), (to, "to") })
        {
            if (string.IsNullOrWhiteSpace(text))
            {
                problems.Add(new($"$.{field}", $"{field} is required: a date and time in UTC such as 2027-01-01T02:30"));
            }
            else
            {
                ScheduleForm.At(text, field, problems);
            }
        }

        return problems;
    }

    /// <summary>The schedule page again, the backfill range as typed and what is wrong with it.</summary>
    private static RazorComponentResult BackfillRefused(ConsoleCaller caller, ScheduleView schedule, string? from, string? to,
        IReadOnlyList<Diagnostic> problems, string? error = null, int status = StatusCodes.Status400BadRequest) =>
        ConsolePages.Page<SchedulePage>(new ScheduleModel(caller, schedule, ScheduleForm.Of(schedule), problems, null,
            error ?? string.Join("; ", problems.Select(p => $"{p.Path}: {p.Message}")), from, to), status);

    private static RazorComponentResult Refused(ConsoleCaller caller) => ConsolePages.Refused(caller, "managing schedules");

    private static RazorComponentResult NoSuchSchedule(ConsoleCaller caller, Guid id) =>
        ConsolePages.Message(caller, "No such schedule", ScheduleEndpoints.NotFoundMessage(id), StatusCodes.Status404NotFound);

    /// <summary>The status the API answers a refused change with.</summary>
    private static int StatusOf(ScheduleChange change) => change.Outcome switch
    {
        ScheduleChangeOutcome.Invalid => StatusCodes.Status400BadRequest,
        ScheduleChangeOutcome.NotFound => StatusCodes.Status404NotFound,
        _ => StatusCodes.Status409Conflict,
    };
}
