using System.Security.Claims;

namespace WorkflowService.Security;

/// <summary>
/// The claims every scheme ends in, whatever the token or key called them: who the caller is (the actor), the roles it
/// holds (candidate roles of tasks match these) and the service roles they grant.
/// </summary>
public static class WorkflowClaims
{
    public const string AuthenticationType = "workflow";
    public const string ActorType = "workflow:actor";
    public const string RoleType = "workflow:role";
    public const string ServiceRoleType = "workflow:service-role";

    /// <summary>Who made the call: a token's user id or a key's name; null when authentication is off.</summary>
    public static string? Actor(this ClaimsPrincipal user) => user.FindFirst(ActorType)?.Value;

    /// <summary>The caller's roles as its token or key states them.</summary>
    public static IEnumerable<string> Roles(this ClaimsPrincipal user) => user.FindAll(RoleType).Select(c => c.Value);

    public static bool HasServiceRole(this ClaimsPrincipal user, params string[] roles) =>
        user.FindAll(ServiceRoleType).Any(c => roles.Contains(c.Value, StringComparer.Ordinal));
}
