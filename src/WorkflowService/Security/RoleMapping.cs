using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>
/// Brings every authenticated caller to the same claims: a bearer token's user, role and tenant claims (names from
/// Authentication:Jwt) become the actor, roles and tenant, and the roles grant service roles through Authorization:Roles.
/// </summary>
public sealed class RoleMapping(IOptions<AuthenticationSettings> authentication, IOptions<AuthorizationSettings> authorization)
    : IClaimsTransformation
{
    public Task<ClaimsPrincipal> TransformAsync(ClaimsPrincipal principal)
    {
        if (principal.Identity is not { IsAuthenticated: true } || principal.Identities.Any(i => i.AuthenticationType == WorkflowClaims.AuthenticationType))
        {
            return Task.FromResult(principal);
        }

        var identity = new ClaimsIdentity(WorkflowClaims.AuthenticationType, WorkflowClaims.ActorType, WorkflowClaims.RoleType);
        // A key's identity carries its claims already; a token's are mapped (whatever claims of these types it carries itself).
        if (!principal.Identities.Any(i => i.AuthenticationType == ApiKeyHandler.SchemeName))
        {
            var jwt = authentication.Value.Jwt;
            if (principal.FindFirst(jwt.UserClaim)?.Value is { Length: > 0 } user)
            {
                identity.AddClaim(new Claim(WorkflowClaims.ActorType, user));
            }

            identity.AddClaims(principal.FindAll(jwt.RoleClaim).Select(c => new Claim(WorkflowClaims.RoleType, c.Value)));
            // An empty tenant claim is the default tenant; several values are kept, and refused (ServiceRoleHandler).
            identity.AddClaims(principal.FindAll(jwt.TenantClaim).Where(c => c.Value.Length > 0)
                .Select(c => new Claim(WorkflowClaims.TenantType, c.Value)));
        }

        var roles = principal.Roles().Concat(identity.FindAll(WorkflowClaims.RoleType).Select(c => c.Value)).ToHashSet(StringComparer.Ordinal);
        foreach (var serviceRole in ServiceRoles.All)
        {
            var grantedBy = authorization.Value.Roles.TryGetValue(serviceRole, out var mapped) ? mapped : [serviceRole];
            if (grantedBy.Any(roles.Contains))
            {
                identity.AddClaim(new Claim(WorkflowClaims.ServiceRoleType, serviceRole));
            }
        }

        var transformed = principal.Clone();
        transformed.AddIdentity(identity);
        return Task.FromResult(transformed);
    }
}
