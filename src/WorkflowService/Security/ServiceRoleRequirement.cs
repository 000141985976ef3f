using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>Met by a caller holding one of <see cref="Roles"/>; an empty list is met by any authenticated caller.</summary>
public sealed record ServiceRoleRequirement(IReadOnlyList<string> Roles) : IAuthorizationRequirement;

/// <summary>
/// Grants <see cref="ServiceRoleRequirement"/> by the caller's service roles. With authentication off (no scheme: Mode=None,
/// or Development with nothing configured) every requirement is met: there is no identity to check.
/// </summary>
public sealed class ServiceRoleHandler(IOptions<AuthenticationSettings> authentication) : AuthorizationHandler<ServiceRoleRequirement>
{
    protected override Task HandleRequirementAsync(AuthorizationHandlerContext context, ServiceRoleRequirement requirement)
    {
        if (!authentication.Value.HasScheme
            || (context.User.Identity is { IsAuthenticated: true }
                && (requirement.Roles.Count == 0 || context.User.HasServiceRole([.. requirement.Roles]))))
        {
            context.Succeed(requirement);
        }

        return Task.CompletedTask;
    }
}
