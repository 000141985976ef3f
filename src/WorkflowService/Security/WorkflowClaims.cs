using System.Security.Claims;

namespace WorkflowService.Security;

/// <summary>
/// The claims every scheme ends in, whatever the token or key called them: who the caller is (the actor), the roles it
/// holds (candidate roles of tasks match these), the service roles they grant, and the tenant whose data it sees. They
/// live in one identity of the service's own (<see cref="AuthenticationType"/>), which only <see cref="RoleMapping"/>
/// makes: a token that carries claims of these names itself gains nothing by it.
/// </summary>
public static class WorkflowClaims
{
    public const string AuthenticationType = "workflow";
    public const string ActorType = "workflow:actor";
    public const string RoleType = "workflow:role";
    public const string ServiceRoleType = "workflow:service-role";
    public const string TenantType = "workflow:tenant";

    /// <summary>The longest tenant a caller may carry (the stores' tenant columns hold 100 characters).</summary>
    public const int MaxTenantLength = 100;

    /// <summary>Who made the call: a token's user id or a key's name; null when authentication is off.</summary>
    public static string? Actor(this ClaimsPrincipal user) => Own(user)?.FindFirst(ActorType)?.Value;

    /// <summary>The caller's roles as its token or key states them.</summary>
    public static IEnumerable<string> Roles(this ClaimsPrincipal user) =>
        Own(user)?.FindAll(RoleType).Select(c => c.Value) ?? [];

    /// <summary>
    /// The tenant whose definitions, instances, tasks, signals and dead letters the caller sees: a token's tenant claim
    /// (Authentication:Jwt:TenantClaim) or a key's Tenant; "" (the default tenant) when it carries none, and when
    /// authentication is off.
    /// </summary>
    public static string Tenant(this ClaimsPrincipal user) => Tenants(user) is [var first, ..] ? first : "";

    /// <summary>Every distinct tenant the caller's credentials name; more than one is refused (<see cref="ServiceRoleHandler"/>).</summary>
    public static IReadOnlyList<string> Tenants(this ClaimsPrincipal user)
    {
        // Asked on every request (authorisation, then the endpoint): a loop, as callers carry one tenant or none.
        List<string>? tenants = null;
        if (Own(user) is { } own)
        {
            foreach (var claim in own.Claims)
            {
                if (claim.Type == TenantType && (tenants is null || !tenants.Contains(claim.Value, StringComparer.Ordinal)))
                {
                    (tenants ??= new List<string>(1)).Add(claim.Value);
                }
            }
        }

        return tenants ?? (IReadOnlyList<string>)[];
    }

    public static bool HasServiceRole(this ClaimsPrincipal user, params string[] roles) =>
        Own(user)?.FindAll(ServiceRoleType).Any(c => roles.Contains(c.Value, StringComparer.Ordinal)) ?? false;

    internal static ClaimsIdentity? Own(ClaimsPrincipal user)
    {
        foreach (var identity in user.Identities)
        {
            if (identity.AuthenticationType == AuthenticationType)
            {
                return identity;
            }
        }

        return null;
    }
}
