using System.Text.Json;
using Microsoft.AspNetCore.Antiforgery;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using WorkflowService.Api;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.OperatorConsole.Pages;
using Microsoft.Extensions.Options;
using WorkflowService.Security;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// The console's actions (POST, with an antiforgery token): each is first shown on a confirmation page (a migration with
/// its dry-run plan), then taken through the same engine calls and role checks as the API, then the page returns to where
/// it was and says what happened.
/// </summary>
public static class ConsoleActions
{
    private static readonly string[] InstanceActions = ["signal", "cancel", "terminate", "suspend", "resume", "migrate"];

    public static IEndpointRouteBuilder MapConsoleActions(this IEndpointRouteBuilder routes)
    {
        // Every action needs the antiforgery token its form carries, whether or not it reads a field.
        var group = routes.MapGroup(ConsolePaths.Root).ExcludeFromDescription().WithMetadata(new RequireAntiforgeryTokenAttribute())
            .RequireAuthorization(Policies.Console);
        // The antiforgery middleware only records its verdict; binding a form enforces it, and this filter enforces it for
        // the actions that read no field (sign-out).
        group.AddEndpointFilter(async (context, next) =>
            context.HttpContext.Features.Get<IAntiforgeryValidationFeature>() is { IsValid: false }
                ? ConsolePages.Message(null, "Bad request", ConsoleErrorPage.ExpiredForm, StatusCodes.Status400BadRequest)
                : await next(context));
        group.MapPost("/sign-in", SignIn).AllowAnonymous();
        group.MapPost("/sign-out", SignOut).AllowAnonymous();
        group.MapPost("/instances/{id:guid}/confirm", ConfirmInstanceAction);
        group.MapPost("/instances/{id:guid}/{action}", TakeInstanceAction);
        group.MapPost("/dead-letters/{id:guid}/confirm", ConfirmReplay);
        group.MapPost("/dead-letters/{id:guid}/replay", Replay);
        group.MapPost("/tasks/{id:guid}/confirm", ConfirmTaskAction);
        group.MapPost("/tasks/{id:guid}/{action}", TakeTaskAction);
        group.MapSubscriptionActions();
        group.MapScheduleActions();
        return routes;
    }

    private static RedirectHttpResult SignIn([FromForm] string? credential, [FromForm] string? returnUrl, HttpContext http, ConsoleSessionCookie sessions)
    {
        var back = ConsolePaths.IsLocal(returnUrl) ? returnUrl! : ConsolePaths.Instances;
        if (string.IsNullOrWhiteSpace(credential) || credential.Length > ConsoleSession.MaxCredentialLength)
        {
            return TypedResults.Redirect($"{ConsolePaths.SignIn}?rejected=1&returnUrl={Uri.EscapeDataString(back)}");
        }

        sessions.SignIn(http, credential.Trim());
        return TypedResults.Redirect(back);
    }

    private static async Task<RedirectHttpResult> SignOut(HttpContext http, ConsoleSessionCookie sessions)
    {
        await sessions.SignOutAsync(http);
        return TypedResults.Redirect(ConsolePaths.SignIn.Value!);
    }

    private static async Task<IResult> ConfirmInstanceAction(
        Guid id, [FromForm] string? action, [FromForm] string? signalName, [FromForm] string? payload, [FromForm] int? toVersion,
        HttpContext http, IInstanceStore store, InstanceMigrator migrator, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (action is null || !InstanceActions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on an instance.", StatusCodes.Status400BadRequest);
        }

        if (!May(caller, action))
        {
            return ConsolePages.Refused(caller, $"the {action} action");
        }

        var instance = await store.GetInstanceAsync(caller.Tenant, id, cancellationToken);
        if (instance is null)
        {
            return ConsolePages.Message(caller, "No such instance", $"No instance has the id {id}.", StatusCodes.Status404NotFound);
        }

        var back = ConsolePaths.Instance(id);
        var target = $"{back}/{action}";
        var what = $"{instance.DefinitionName} v{instance.DefinitionVersion} ({instance.Status})";
        List<KeyValuePair<string, string>> details = [new("Instance", id.ToString()), new("Definition", what)];
        switch (action)
        {
            case "signal":
                var error = SignalError(signalName, payload, out var formatted);
                details.Add(new("Signal", signalName ?? ""));
                details.Add(new("Payload", formatted ?? "none"));
                return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, "Send a signal", $"Send signal '{signalName}' to this instance?", target,
                    "Send signal", back, false, details,
                    [new("signalName", signalName ?? ""), new("payload", payload ?? ""), new("idempotencyKey", OneAction())], Error: error,
                    CanConfirm: error is null), error is null ? StatusCodes.Status200OK : StatusCodes.Status400BadRequest);
            case "migrate":
                if (toVersion is not > 0)
                {
                    return ConsolePages.Message(caller, "Migration", "Choose the version to migrate to.", StatusCodes.Status400BadRequest);
                }

                var plan = await migrator.MigrateAsync([id], new MigrationPlan(toVersion.Value, null, caller.Name, caller.Tenant), dryRun: true, cancellationToken);
                var allowed = plan.Outcome == MigrationOutcome.DryRun;
                var refusal = plan.Outcome switch
                {
                    MigrationOutcome.DryRun => null,
                    MigrationOutcome.DefinitionNotFound => $"Definition '{instance.DefinitionName}' has no version {toVersion}.",
                    MigrationOutcome.InstanceNotFound => $"No instance has the id {id}.",
                    _ => "This migration would strand the instance; nothing will move. See the plan's problem.",
                };
                return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, "Migrate an instance",
                    $"Move this instance from version {instance.DefinitionVersion} to version {toVersion}? This is the dry run's plan; nothing has moved yet.",
                    target, "Migrate", back, false, details, [new("toVersion", toVersion.Value.ToString(System.Globalization.CultureInfo.InvariantCulture))],
                    plan.Steps, refusal, allowed));
            default:
                var (title, question, dangerous) = action switch
                {
                    "cancel" => ("Cancel an instance", "Cancel this instance? Its definition's cancel path runs, then it ends cancelled.", true),
                    "terminate" => ("Terminate an instance", "Terminate this instance now? It ends at once, without its cancel path. This cannot be undone.", true),
                    "suspend" => ("Suspend an instance", "Suspend this instance? Signals and timers are kept, not applied, until it is resumed.", false),
                    _ => ("Resume an instance", "Resume this instance? What arrived meanwhile is applied in turn.", false),
                };
                List<KeyValuePair<string, string>> fields = [];
                return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, title, question, target, title.Split(' ')[0], back, dangerous, details, fields));
        }
    }

    private static async Task<IResult> TakeInstanceAction(
        Guid id, string action, [FromForm] string? signalName, [FromForm] string? payload, [FromForm] int? toVersion, [FromForm] string? idempotencyKey,
        HttpContext http, WorkflowRuntime runtime, InstanceMigrator migrator, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!InstanceActions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on an instance.", StatusCodes.Status404NotFound);
        }

        if (!May(caller, action))
        {
            return ConsolePages.Refused(caller, $"the {action} action");
        }

        var back = ConsolePaths.Instance(id);
        const string Reason = "from the console";
        switch (action)
        {
            case "signal":
                if (SignalError(signalName, payload, out _) is { } error)
                {
                    return ConsolePages.Message(caller, "Signal not sent", error, StatusCodes.Status400BadRequest);
                }

                var sent = await runtime.SignalAsync(
                    new SignalRequest(id, signalName!, string.IsNullOrWhiteSpace(payload) ? null : payload, null, Once(idempotencyKey), caller.Name, caller.Tenant),
                    cancellationToken);
                return sent.Outcome switch
                {
                    SignalOutcome.Applied or SignalOutcome.Accepted or SignalOutcome.Duplicate => Done(back, action),
                    SignalOutcome.InstanceEnded => ConsolePages.Message(caller, "Signal not sent",
                        $"Instance {id} already ended as {sent.Instance!.Status}; it takes no more signals.", StatusCodes.Status409Conflict),
                    _ => ConsolePages.Message(caller, "No such instance", $"No instance has the id {id}.", StatusCodes.Status404NotFound),
                };
            case "migrate":
                if (toVersion is not > 0)
                {
                    return ConsolePages.Message(caller, "Migration", "Choose the version to migrate to.", StatusCodes.Status400BadRequest);
                }

                var migrated = await migrator.MigrateAsync([id], new MigrationPlan(toVersion.Value, null, caller.Name, caller.Tenant), dryRun: false, cancellationToken);
                return migrated.Outcome switch
                {
                    MigrationOutcome.Migrated => Done(back, action),
                    MigrationOutcome.InstanceNotFound => ConsolePages.Message(caller, "No such instance", $"No instance has the id {id}.", StatusCodes.Status404NotFound),
                    MigrationOutcome.DefinitionNotFound => ConsolePages.Message(caller, "Not migrated", $"The definition has no version {toVersion}.",
                        StatusCodes.Status404NotFound),
                    // As the API answers a plan that would strand an instance: 422, and nothing moved.
                    _ => ConsolePages.Message(caller, "Not migrated",
                        migrated.Steps.FirstOrDefault(s => !s.Allowed)?.Problem ?? "The migration was refused; nothing moved.",
                        StatusCodes.Status422UnprocessableEntity),
                };
            default:
                var change = action switch
                {
                    "cancel" => await runtime.CancelAsync(caller.Tenant, id, Reason, caller.Name, cancellationToken),
                    "terminate" => await runtime.TerminateAsync(caller.Tenant, id, Reason, caller.Name, cancellationToken),
                    "suspend" => await runtime.SuspendAsync(caller.Tenant, id, Reason, caller.Name, cancellationToken),
                    _ => await runtime.ResumeAsync(caller.Tenant, id, caller.Name, cancellationToken),
                };
                return change.Outcome switch
                {
                    StateChangeOutcome.Changed => Done(back, action),
                    StateChangeOutcome.NotAllowed => ConsolePages.Message(caller, "Not possible now",
                        $"Instance {id} is {change.Instance!.Status}, so it cannot be {Past(action)}.", StatusCodes.Status409Conflict),
                    _ => ConsolePages.Message(caller, "No such instance", $"No instance has the id {id}.", StatusCodes.Status404NotFound),
                };
        }
    }

    private static async Task<IResult> ConfirmReplay(Guid id, [FromForm] string? returnUrl, HttpContext http, ISignalQueue signals,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.Operate)
        {
            return ConsolePages.Refused(caller, "replaying dead letters");
        }

        var signal = await signals.GetSignalAsync(caller.Tenant, id, cancellationToken);
        if (signal is null)
        {
            return ConsolePages.Message(caller, "No such signal", $"No signal has the id {id}.", StatusCodes.Status404NotFound);
        }

        var back = ConsolePaths.IsLocal(returnUrl) ? returnUrl! : ConsolePaths.DeadLetters;
        List<KeyValuePair<string, string>> details =
        [
            new("Signal", $"{signal.Name} ({signal.Status})"),
            new("Instance", signal.InstanceId.ToString()),
            new("Attempts", signal.Attempts.ToString(System.Globalization.CultureInfo.InvariantCulture)),
            new("Last error", signal.LastError ?? "none"),
        ];
        var error = signal.Status == SignalStatus.DeadLettered ? null : $"Signal {id} is not dead-lettered.";
        return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, "Replay a dead letter",
            "Queue this signal again? A faulted instance resumes from its wait.", $"/console/dead-letters/{id}/replay", "Replay", back, false, details,
            [new("returnUrl", back), new("idempotencyKey", OneAction())], Error: error, CanConfirm: error is null));
    }

    private static async Task<IResult> Replay(Guid id, [FromForm] string? returnUrl, [FromForm] string? idempotencyKey, HttpContext http,
        DeadLetterQueue deadLetters, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.Operate)
        {
            return ConsolePages.Refused(caller, "replaying dead letters");
        }

        var outcome = await deadLetters.ReplayAsync(caller.Tenant, id, caller.Name, Once(idempotencyKey), cancellationToken);
        var back = ConsolePaths.IsLocal(returnUrl) ? returnUrl! : ConsolePaths.DeadLetters;
        return outcome switch
        {
            ReplayOutcome.Replayed => Done(back, "replay"),
            ReplayOutcome.NotDeadLettered => ConsolePages.Message(caller, "Not replayed", $"Signal {id} is not dead-lettered (it may have been replayed already).",
                StatusCodes.Status409Conflict),
            _ => ConsolePages.Message(caller, "No such signal", $"No signal has the id {id}.", StatusCodes.Status404NotFound),
        };
    }

    private static async Task<IResult> ConfirmTaskAction(Guid id, [FromForm] string? action, [FromForm] string? result, HttpContext http, TaskInbox inbox,
        IOptions<AuthenticationSettings> authentication, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        var (task, refusal) = await WorkableTaskAsync(id, action, caller, http, inbox, authentication.Value, cancellationToken);
        if (task is null)
        {
            return refusal!;
        }

        var error = action == "complete" ? JsonError(result, "The result") : null;
        List<KeyValuePair<string, string>> details = [new("Task", task.Title), new("Instance", task.InstanceId.ToString()), new("Step", task.StepId)];
        if (action == "complete")
        {
            details.Add(new("Result", string.IsNullOrWhiteSpace(result) ? "none" : ConsoleFormat.Json(result)));
        }

        return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, action == "claim" ? "Claim a task" : "Complete a task",
            action == "claim" ? $"Claim '{task.Title}' for yourself?" : $"Complete '{task.Title}'? The instance continues with the result.",
            $"{ConsolePaths.Tasks}/{id}/{action}", action == "claim" ? "Claim" : "Complete", ConsolePaths.Tasks, false, details,
            [new("result", result ?? "")], Error: error, CanConfirm: error is null));
    }

    private static async Task<IResult> TakeTaskAction(Guid id, string action, [FromForm] string? result, HttpContext http, TaskInbox inbox,
        IOptions<AuthenticationSettings> authentication, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        var (task, refusal) = await WorkableTaskAsync(id, action, caller, http, inbox, authentication.Value, cancellationToken);
        if (task is null)
        {
            return refusal!;
        }

        if (action == "claim")
        {
            // With authentication off there is no caller to claim for: the console claims as "console".
            var outcome = await inbox.ClaimAsync(task, caller.Name ?? "console", cancellationToken);
            return outcome == TaskClaimOutcome.Claimed
                ? Done(ConsolePaths.Tasks, action)
                : ConsolePages.Message(caller, "Not claimed", $"Task {id} cannot be claimed now ({outcome}).", StatusCodes.Status409Conflict);
        }

        if (JsonError(result, "The result") is { } error)
        {
            return ConsolePages.Message(caller, "Not completed", error, StatusCodes.Status400BadRequest);
        }

        var completed = await inbox.CompleteAsync(caller.Tenant, id, caller.Name ?? task.ClaimedBy, string.IsNullOrWhiteSpace(result) ? null : result, cancellationToken);
        return completed == TaskCompletionOutcome.Completed
            ? Done(ConsolePaths.Tasks, action)
            : ConsolePages.Message(caller, "Not completed", $"Task {id} cannot be completed now ({completed}).", StatusCodes.Status409Conflict);
    }

    private static async Task<(HumanTask? Task, IResult? Refusal)> WorkableTaskAsync(Guid id, string? action, ConsoleCaller caller, HttpContext http,
        TaskInbox inbox, AuthenticationSettings authentication, CancellationToken cancellationToken)
    {
        if (action is not ("claim" or "complete"))
        {
            return (null, ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on a task.", StatusCodes.Status400BadRequest));
        }

        var task = await inbox.GetAsync(caller.Tenant, id, cancellationToken);
        if (task is null)
        {
            return (null, ConsolePages.Message(caller, "No such task", $"No task has the id {id}.", StatusCodes.Status404NotFound));
        }

        var taskCaller = TaskCaller.Of(http.User, authentication);
        return taskCaller.MayWork(task)
            ? (task, null)
            : (null, ConsolePages.Message(caller, "Not allowed", taskCaller.Refusal(task, action), StatusCodes.Status403Forbidden));
    }

    /// <summary>
    /// The Idempotency-Key of one confirmation page: a confirm button pressed twice (or a form sent again from the
    /// browser's history) sends the signal or replays the dead letter once, as the API does for a repeated key.
    /// </summary>
    private static string OneAction() => $"console-{Guid.NewGuid():N}";

    private static string? Once(string? idempotencyKey) => idempotencyKey is { Length: > 0 and <= 200 } ? idempotencyKey : null;

    private static bool May(ConsoleCaller caller, string action) => action == "signal" ? caller.RunInstances : caller.Operate;

    internal static RedirectHttpResult Done(string back, string action) =>
        TypedResults.Redirect($"{back}{(back.Contains('?', StringComparison.Ordinal) ? '&' : '?')}done={action}");

    private static string Past(string action) => action switch
    {
        "cancel" => "cancelled",
        "terminate" => "terminated",
        "suspend" => "suspended",
        _ => "resumed",
    };

    private static string? SignalError(string? name, string? payload, out string? formatted)
    {
        formatted = string.IsNullOrWhiteSpace(payload) ? null : ConsoleFormat.Json(payload);
        if (!ForEachItems.IsSendable(name))
        {
            return "The signal name is required: " + ForEachItems.SendableNameRule + ".";
        }

        return JsonError(payload, "The payload");
    }

    private static string? JsonError(string? json, string what)
    {
        if (string.IsNullOrWhiteSpace(json))
        {
            return null;
        }

        try
        {
            using var _ = JsonDocument.Parse(json);
            return null;
        }
        catch (JsonException e)
        {
            return $"{what} is not valid JSON: {e.Message.Split(" Path:", 2)[0]}";
        }
    }
}
