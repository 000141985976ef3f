using System.Security.Claims;
using System.Text;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Diagrams;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>Diagrams of definitions and instances, rendered on the server as SVG.</summary>
public static class DiagramEndpoints
{
    public static IEndpointRouteBuilder MapDiagramEndpoints(this IEndpointRouteBuilder routes)
    {
        routes.MapGet("/definitions/{name}/versions/{version:int}/diagram.svg", GetDefinitionDiagram)
            .WithTags("Definitions")
            .WithName("GetDefinitionDiagram")
            .RequireAuthorization(Policies.ReadDefinitions)
            .WithSummary("The definition version as an SVG diagram: its steps, transitions and branch conditions")
            .Produces<string>(StatusCodes.Status200OK, DiagramRenderer.ContentType)
            .ProducesProblem(StatusCodes.Status404NotFound);
        routes.MapGet("/instances/{id:guid}/diagram.svg", GetInstanceDiagram)
            .WithTags("Instances")
            .WithName("GetInstanceDiagram")
            .RequireAuthorization(Policies.ReadInstances)
            .WithSummary("The instance's definition as an SVG diagram with its completed, current and failed steps marked")
            .Produces<string>(StatusCodes.Status200OK, DiagramRenderer.ContentType)
            .ProducesProblem(StatusCodes.Status404NotFound);
        return routes;
    }

    private static async Task<Results<ContentHttpResult, ProblemHttpResult>> GetDefinitionDiagram(
        string name, int version, DefinitionRegistry registry, DiagramRenderer renderer, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var definition = await registry.GetAsync(user.Tenant(), name, version, cancellationToken);
        return definition is null
            ? Problems.NotFound($"Definition '{name}' has no version {version}.")
            : Svg(renderer.RenderDefinition(definition));
    }

    private static async Task<Results<ContentHttpResult, ProblemHttpResult>> GetInstanceDiagram(
        Guid id, IInstanceStore store, DefinitionRegistry registry, DiagramRenderer renderer, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var instance = await store.GetInstanceAsync(user.Tenant(), id, cancellationToken);
        if (instance is null)
        {
            return Problems.NotFound($"No instance has the id {id}.");
        }

        var definition = await registry.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken);
        if (definition is null)
        {
            return Problems.NotFound($"Definition '{instance.DefinitionName}' has no version {instance.DefinitionVersion}.");
        }

        var history = await store.GetHistoryAsync(instance, cancellationToken);
        return Svg(renderer.RenderInstance(definition, instance, history));
    }

    private static ContentHttpResult Svg(string svg) => TypedResults.Text(svg, DiagramRenderer.ContentType, Encoding.UTF8);
}
