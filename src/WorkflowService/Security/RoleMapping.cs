using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>
/// Brings every authenticated caller to the same claims, in an identity of the service's own: an API key's name and
/// roles as its handler states them, or a bearer token's user and role claims (names from Authentication:Jwt); the
/// roles then grant service roles through Authorization:Roles.
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
        if (principal.Identities.FirstOrDefault(i => i.AuthenticationType == ApiKeyHandler.SchemeName) is { } key)
        {
            actor = key.FindFirst(WorkflowClaims.ActorType)?.Value;
            roles = [.. key.FindAll(WorkflowClaims.RoleType).Select(c => c.Value)];
        }
        else
        {
            var jwt = authentication.Value.Jwt;
            actor = principal.FindFirst(jwt.UserClaim)?.Value;
            roles = [.. principal.FindAll(jwt.RoleClaim).Select(c => c.Value)];
        }

        var identity = new ClaimsIdentity(WorkflowClaims.AuthenticationType, WorkflowClaims.ActorType, WorkflowClaims.RoleType);
        if (!string.IsNullOrEmpty(actor))
        {
            identity.AddClaim(new Claim(WorkflowClaims.ActorType, actor));
        }

        identity.AddClaims(roles.Distinct(StringComparer.Ordinal).Select(r => new Claim(WorkflowClaims.RoleType, r)));
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
