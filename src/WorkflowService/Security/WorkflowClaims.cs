using System.Security.Claims;

namespace WorkflowService.Security;

/// <summary>
/// The claims every scheme ends in, whatever the token or key called them: who the caller is (the actor), the roles it
/// holds (candidate roles of tasks match these) and the service roles they grant. They live in one identity of the
/// service's own (<see cref="AuthenticationType"/>), which only <see cref="RoleMapping"/> makes: a token that carries
/// claims of these names itself gains nothing by it.
/// </summary>
public static class WorkflowClaims
{
    public const string AuthenticationType = "workflow";
    public const string ActorType = "workflow:actor";
    public const string RoleType = "workflow:role";
    public const string ServiceRoleType = "workflow:service-role";

    /// <summary>Who made the call: a token's user id or a key's name; null when authentication is off.</summary>
    public static string? Actor(this ClaimsPrincipal user) => Own(user)?.FindFirst(ActorType)?.Value;

    /// <summary>The caller's roles as its token or key states them.</summary>
    public static IEnumerable<string> Roles(this ClaimsPrincipal user) =>
        Own(user)?.FindAll(RoleType).Select(c => c.Value) ?? [];

    public static bool HasServiceRole(this ClaimsPrincipal user, params string[] roles) =>
        Own(user)?.FindAll(ServiceRoleType).Any(c => roles.Contains(c.Value, StringComparer.Ordinal)) ?? false;

    internal static ClaimsIdentity? Own(ClaimsPrincipal user) =>
        user.Identities.FirstOrDefault(i => i.AuthenticationType == AuthenticationType);
}
