using System.Security.Claims;
using WorkflowService.Engine.Persistence;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>Who calls the inbox: with authentication off there is no identity to check, and the body names the user.</summary>
internal sealed record TaskCaller(bool IsOpen, TaskCandidate? Candidate, bool ReadsEverything, string Tenant)
{
    public static TaskCaller Of(ClaimsPrincipal user, AuthenticationSettings settings) =>
        !settings.HasScheme
            ? new TaskCaller(true, null, true, user.Tenant())
            : new TaskCaller(false, user.Actor() is { } actor ? new TaskCandidate(actor, [.. user.Roles()]) : null,
                user.HasServiceRole(Policies.Grants[Policies.ReadInstances]), user.Tenant());

    public bool MayWork(HumanTask task) => IsOpen || (Candidate?.MayWork(task) ?? false);

    // Says why without telling whom the task is for: a caller who may not work it learns nothing more of it.
    public string Refusal(HumanTask task, string action) => Candidate is null
        ? $"Only a caller with a user id may {action} a task; these credentials carry none."
        : $"You may not {action} task {task.Id}: it is for another user or role.";
}
