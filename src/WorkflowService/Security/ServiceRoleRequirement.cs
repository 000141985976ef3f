using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>Met by a caller holding one of <see cref="Roles"/>; an empty list is met by any authenticated caller.</summary>
public sealed record ServiceRoleRequirement(IReadOnlyList<string> Roles) : IAuthorizationRequirement;

/// <summary>
/// Grants <see cref="ServiceRoleRequirement"/> by the caller's service roles. With authentication off (no scheme: Mode=None,
/// or Development with nothing configured) every requirement is met: there is no identity to check. Credentials naming
/// more than one tenant, or a tenant longer than <see cref="WorkflowClaims.MaxTenantLength"/>, meet none: which tenant's
/// data they see would be a guess.
/// </summary>
public sealed class ServiceRoleHandler(IOptions<AuthenticationSettings> authentication) : AuthorizationHandler<ServiceRoleRequirement>
{
    protected override Task HandleRequirementAsync(AuthorizationHandlerContext context, ServiceRoleRequirement requirement)
    {
        if (!authentication.Value.HasScheme
            || (context.User.Identity is { IsAuthenticated: true }
                && context.User.Tenants() is { Count: <= 1 } tenants && tenants.All(t => t.Length <= WorkflowClaims.MaxTenantLength)
                && (requirement.Roles.Count == 0 || context.User.HasServiceRole([.. requirement.Roles]))))
        {
            context.Succeed(requirement);
        }

        return Task.CompletedTask;
    }
}
