using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Persistence;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// The signal queue across the caller's tenant's instances: what is due, parked, or claimed by which node.
/// </summary>
public static class SignalEndpoints
{
    public static RouteGroupBuilder MapSignalEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/signals").WithTags("Signals").RequireAuthorization(Policies.Operate);
        group.MapGet("/", List).WithName("ListSignals")
            .WithSummary("Signals by status, claiming node and name (e.g. the claims a node holds)")
            .ProducesValidationProblem();
        return group;
    }

    private static async Task<Results<Ok<PageView<SignalView>>, ValidationProblem>> List(
        [FromKeyedServices(OperatorReads.MayBeStale)] IOperatorQueries store,
        ClaimsPrincipal user,
        CancellationToken cancellationToken,
        SignalStatus? status = null,
        string? claimedBy = null,
        string? name = null,
        int offset = 0,
        int limit = 50)
    {
        if (Problems.InvalidPage(offset, limit) is { } invalid)
        {
            return invalid;
        }

        var page = await store.QuerySignalsAsync(new SignalQuery(status, claimedBy, name, offset, limit, user.Tenant()), cancellationToken);
        return TypedResults.Ok(new PageView<SignalView>(page.Items.Select(SignalView.From).ToList(), page.Total, page.Offset, page.Limit));
    }
}
