using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.Options;
using WorkflowService.Security;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// Who is looking at the console and what the API would let them do: each page shows only the actions the caller's roles
/// allow, and each action is checked again against the same policy when it is taken.
/// </summary>
public sealed record ConsoleCaller(
    string? Name,
    string Tenant,
    bool AuthenticationOn,
    bool ReadDefinitions,
    bool ReadInstances,
    bool RunInstances,
    bool Operate,
    bool ManageSubscriptions,
    bool ManageSchedules)
{
    public static async Task<ConsoleCaller> OfAsync(HttpContext http)
    {
        var user = http.User;
        var authorization = http.RequestServices.GetRequiredService<IAuthorizationService>();
        var authenticationOn = http.RequestServices.GetRequiredService<IOptions<AuthenticationSettings>>().Value.HasScheme;
        async Task<bool> May(string policy) => (await authorization.AuthorizeAsync(user, policy).ConfigureAwait(false)).Succeeded;
        return new ConsoleCaller(
            user.Actor(),
            user.Tenant(),
            authenticationOn,
            await May(Policies.ReadDefinitions).ConfigureAwait(false),
            await May(Policies.ReadInstances).ConfigureAwait(false),
            await May(Policies.RunInstances).ConfigureAwait(false),
            await May(Policies.Operate).ConfigureAwait(false),
            await May(Policies.ManageSubscriptions).ConfigureAwait(false),
            await May(Policies.ManageSchedules).ConfigureAwait(false));
    }

    /// <summary>The caller's roles as the page header shows them.</summary>
    public string Describe() => !AuthenticationOn
        ? "authentication is off"
        : string.Join(", ", new[] { (ReadInstances, "instances"), (RunInstances, "run"), (Operate, "operate"), (ReadDefinitions, "definitions"), (ManageSubscriptions, "subscriptions"), (ManageSchedules, "schedules") }
            .Where(p => p.Item1).Select(p => p.Item2)) is { Length: > 0 } grants ? grants : "no roles";
}
