using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>
/// Brings every authenticated caller to the same claims, in an identity of the service's own: an API key's name, roles
/// and tenant as its handler states them, or a bearer token's user, role and tenant claims (names from
/// Authentication:Jwt); the roles then grant service roles through Authorization:Roles.
/// </summary>
public sealed class RoleMapping(IOptions<AuthenticationSettings> authentication, IOptions<AuthorizationSettings> authorization)
    : IClaimsTransformation
{
    public Task<ClaimsPrincipal> TransformAsync(ClaimsPrincipal principal)
    {
        if (principal.Identity is not { IsAuthenticated: true } || WorkflowClaims.Own(principal) is not null)
        {
            return Task.FromResult(principal);
        }

        string? actor;
        List<string> roles;
        List<string> tenants;
        if (principal.Identities.FirstOrDefault(i => i.AuthenticationType == ApiKeyHandler.SchemeName) is { } key)
        {
            actor = key.FindFirst(WorkflowClaims.ActorType)?.Value;
            roles = [.. key.FindAll(WorkflowClaims.RoleType).Select(c => c.Value)];
            tenants = [.. key.FindAll(WorkflowClaims.TenantType).Select(c => c.Value)];
        }
        else
        {
            var jwt = authentication.Value.Jwt;
            actor = principal.FindFirst(jwt.UserClaim)?.Value;
            roles = [.. principal.FindAll(jwt.RoleClaim).Select(c => c.Value)];
            // An empty tenant claim is the default tenant; several values are kept, and refused (ServiceRoleHandler).
            tenants = [.. principal.FindAll(jwt.TenantClaim).Select(c => c.Value).Where(v => v.Length > 0)];
        }

        var identity = new ClaimsIdentity(WorkflowClaims.AuthenticationType, WorkflowClaims.ActorType, WorkflowClaims.RoleType);
        if (!string.IsNullOrEmpty(actor))
        {
            identity.AddClaim(new Claim(WorkflowClaims.ActorType, actor));
        }

        identity.AddClaims(roles.Distinct(StringComparer.Ordinal).Select(r => new Claim(WorkflowClaims.RoleType, r)));
        identity.AddClaims(tenants.Distinct(StringComparer.Ordinal).Select(t => new Claim(WorkflowClaims.TenantType, t)));
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
