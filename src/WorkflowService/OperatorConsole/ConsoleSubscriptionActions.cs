using Microsoft.AspNetCore.Mvc;
using WorkflowService.Api;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.OperatorConsole.Pages;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// The console's subscription forms and actions: each goes through the API's own registry calls and words, in the
/// caller's tenant, for callers the subscriptions.manage policy admits. A new or rotated secret is shown on the page the
/// form answers with, once, and never put in a link.
/// </summary>
public static class ConsoleSubscriptionActions
{
    private static readonly string[] Actions = ["pause", "resume", "rotate", "delete"];

    internal static RouteGroupBuilder MapSubscriptionActions(this RouteGroupBuilder group)
    {
        group.MapPost("/subscriptions", Create);
        group.MapPost("/subscriptions/{id:guid}", Change);
        group.MapPost("/subscriptions/{id:guid}/confirm", Confirm);
        group.MapPost("/subscriptions/{id:guid}/{action}", Take);
        group.MapPost("/subscriptions/{id:guid}/deliveries/{deliveryId:guid}/confirm", ConfirmReplay);
        group.MapPost("/subscriptions/{id:guid}/deliveries/{deliveryId:guid}/replay", Replay);
        return group;
    }

    private static async Task<IResult> Create(
        [FromForm] string? name, [FromForm] string? endpoint, [FromForm] string? events, [FromForm] string? definitions,
        [FromForm] string? maxEventsPerBatch, HttpContext http, SubscriptionRegistry registry, ISubscriptionStore store, Microsoft.Extensions.Options.IOptions<ConsoleOptions> options,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        var form = new SubscriptionForm(name, endpoint, events, definitions, maxEventsPerBatch);
        var change = await registry.CreateAsync(caller.Tenant, form.Spec, enabled: true, cancellationToken);
        var list = await ConsolePages.SubscriptionListAsync(caller, store, null, null, options.Value.PageSize, cancellationToken);
        return change.Subscription is { } created
            ? ConsolePages.Page<SubscriptionsPage>(new SubscriptionsModel(caller, list, SubscriptionForm.Empty, created, created.Secret,
                $"Subscription '{created.Name}' created.", null), StatusCodes.Status201Created)
            : ConsolePages.Page<SubscriptionsPage>(new SubscriptionsModel(caller, list, form, null, null, null,
                SubscriptionEndpoints.Refusal(change, form.Spec.Name)), StatusOf(change));
    }

    private static async Task<IResult> Change(
        Guid id, [FromForm] string? name, [FromForm] string? endpoint, [FromForm] string? events, [FromForm] string? definitions,
        [FromForm] string? maxEventsPerBatch, HttpContext http, SubscriptionRegistry registry, ISubscriptionStore store, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        var form = new SubscriptionForm(name, endpoint, events, definitions, maxEventsPerBatch);
        var change = await registry.ReplaceAsync(caller.Tenant, id, form.Spec, cancellationToken);
        if (change.Subscription is not null)
        {
            return ConsoleActions.Done(ConsolePaths.Subscription(id), "changed");
        }

        // The form comes back as it was typed, with the API's words for what is wrong with it.
        return await store.GetSubscriptionAsync(caller.Tenant, id, cancellationToken) is { } subscription
            ? ConsolePages.Page<SubscriptionPage>(new SubscriptionModel(caller, subscription, form, null, null,
                SubscriptionEndpoints.Refusal(change, form.Spec.Name, id)), StatusOf(change))
            : ConsolePages.NoSuchSubscription(caller, id);
    }

    private static async Task<IResult> Confirm(Guid id, [FromForm] string? action, HttpContext http, ISubscriptionStore store,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        if (action is null || !Actions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on a subscription.", StatusCodes.Status400BadRequest);
        }

        if (await store.GetSubscriptionAsync(caller.Tenant, id, cancellationToken) is not { } subscription)
        {
            return ConsolePages.NoSuchSubscription(caller, id);
        }

        var (title, question, label, dangerous) = action switch
        {
            "pause" => ("Pause a subscription", "Pause this subscription? Its events are still recorded and wait for a resume.", "Pause", false),
            "resume" => ("Resume a subscription", "Resume this subscription? The events that waited go out first.", "Resume", false),
            "rotate" => ("Rotate a secret", "Make a new signing secret? The current one still signs during the overlap (Events:SecretOverlap).",
                "Rotate", false),
            _ => ("Delete a subscription", "Delete this subscription and the deliveries it has not made? This cannot be undone.", "Delete", true),
        };
        List<KeyValuePair<string, string>> details =
        [
            new("Subscription", subscription.Name),
            new("Endpoint", subscription.Endpoint),
            new("State", subscription.Enabled ? "active" : $"paused ({subscription.PausedReason})"),
        ];
        var back = ConsolePaths.Subscription(id);
        return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, title, question, $"{back}/{action}", label, back, dangerous, details, []));
    }

    private static async Task<IResult> Take(Guid id, string action, HttpContext http, SubscriptionRegistry registry, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        if (!Actions.Contains(action))
        {
            return ConsolePages.Message(caller, "Unknown action", $"'{action}' is not an action on a subscription.", StatusCodes.Status404NotFound);
        }

        if (action == "delete")
        {
            return await registry.DeleteAsync(caller.Tenant, id, cancellationToken)
                ? ConsoleActions.Done(ConsolePaths.Subscriptions, "deleted")
                : ConsolePages.NoSuchSubscription(caller, id);
        }

        var change = action switch
        {
            // As the API words a pause without a reason: who paused it.
            "pause" => await registry.PauseAsync(caller.Tenant, id, caller.Name is { } by ? $"paused by {by}" : "paused", cancellationToken),
            "resume" => await registry.ResumeAsync(caller.Tenant, id, cancellationToken),
            _ => await registry.RotateSecretAsync(caller.Tenant, id, null, cancellationToken),
        };
        return change switch
        {
            { Subscription: { } rotated } when action == "rotate" => ConsolePages.Page<SubscriptionPage>(new SubscriptionModel(caller, rotated,
                SubscriptionForm.Of(rotated), rotated.Secret, "A new secret signs from now on; the previous one still signs during the overlap.", null)),
            { Subscription: not null } => ConsoleActions.Done(ConsolePaths.Subscription(id), action == "pause" ? "paused" : "resumed"),
            { Outcome: SubscriptionChangeOutcome.NotFound } => ConsolePages.NoSuchSubscription(caller, id),
            _ => ConsolePages.Message(caller, "Not changed", SubscriptionEndpoints.Refusal(change, null, id), StatusOf(change)),
        };
    }

    private static async Task<IResult> ConfirmReplay(Guid id, Guid deliveryId, HttpContext http, ISubscriptionStore store, CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        if (await store.GetSubscriptionAsync(caller.Tenant, id, cancellationToken) is not { } subscription)
        {
            return ConsolePages.NoSuchSubscription(caller, id);
        }

        var back = ConsolePaths.Deliveries(id);
        return ConsolePages.Page<ConfirmPage>(new ConfirmModel(caller, "Replay a delivery",
            "Try this dead-lettered delivery again, with a fresh retry period? It keeps its id, so the receiver can tell it is the same event.",
            $"{back}/{deliveryId}/replay", "Replay", back, false,
            [new("Subscription", subscription.Name), new("Endpoint", subscription.Endpoint), new("Delivery", deliveryId.ToString())], []));
    }

    private static async Task<IResult> Replay(Guid id, Guid deliveryId, HttpContext http, IDeliveryQueue deliveries, DeliveryDoorbell doorbell,
        CancellationToken cancellationToken)
    {
        var caller = await ConsoleCaller.OfAsync(http);
        if (!caller.ManageSubscriptions)
        {
            return ConsolePages.Refused(caller, "managing subscriptions");
        }

        if (!await deliveries.ReplayDeliveryAsync(caller.Tenant, id, deliveryId, cancellationToken))
        {
            return ConsolePages.Message(caller, "Not replayed",
                $"Subscription {id} has no dead-lettered delivery {deliveryId} (it may have been replayed already).", StatusCodes.Status404NotFound);
        }

        doorbell.Ring();
        return ConsoleActions.Done(ConsolePaths.Deliveries(id), "redelivered");
    }

    /// <summary>The status the API answers a refused change with.</summary>
    private static int StatusOf(SubscriptionChange change) => change.Outcome switch
    {
        SubscriptionChangeOutcome.Invalid => StatusCodes.Status400BadRequest,
        SubscriptionChangeOutcome.NotFound => StatusCodes.Status404NotFound,
        _ => StatusCodes.Status409Conflict,
    };
}
