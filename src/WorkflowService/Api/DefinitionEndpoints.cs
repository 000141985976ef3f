using System.Text.Json;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>Publishing and reading workflow definitions.</summary>
public static class DefinitionEndpoints
{
    public static RouteGroupBuilder MapDefinitionEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/definitions").WithTags("Definitions");

        group.MapPost("/", Publish).WithName("PublishDefinition")
            .WithSummary("Publish a definition; the same name again makes a new version")
            .RequireAuthorization(Policies.PublishDefinitions)
            .Accepts<DefinitionDocument>("application/json")
            .Produces<DefinitionProblemDetails>(StatusCodes.Status422UnprocessableEntity, "application/problem+json")
            .ProducesProblem(StatusCodes.Status400BadRequest)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapGet("/", List).WithName("ListDefinitions").WithSummary("List definitions with their latest version")
            .RequireAuthorization(Policies.ReadDefinitions);
        group.MapGet("/{name}", GetVersions).WithName("GetDefinition").WithSummary("Every version of a definition")
            .RequireAuthorization(Policies.ReadDefinitions)
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapGet("/{name}/versions/{version:int}", GetVersion).WithName("GetDefinitionVersion")
            .RequireAuthorization(Policies.ReadDefinitions)
            .WithSummary("One version of a definition, as canonical JSON").ProducesProblem(StatusCodes.Status404NotFound);
        return group;
    }

    private static async Task<Results<Created<DefinitionView>, ProblemHttpResult>> Publish(
        JsonElement body, DefinitionRegistry registry, CancellationToken cancellationToken)
    {
        var diagnostics = new List<Diagnostic>();
        var document = body.ValueKind == JsonValueKind.Object
            ? DefinitionCompiler.Parse(body.GetRawText(), diagnostics)
            : null;
        if (body.ValueKind != JsonValueKind.Object)
        {
            diagnostics.Add(new Diagnostic("$", "the definition must be a JSON object"));
        }

        if (document is not null)
        {
            var result = await registry.PublishAsync(document, cancellationToken);
            if (result.Record is { } record)
            {
                return TypedResults.Created($"/definitions/{record.Name}/versions/{record.Version}", DefinitionView.From(record));
            }

            diagnostics.AddRange(result.Diagnostics);
        }

        return TypedResults.Problem(
            detail: $"The definition has {diagnostics.Count} problem(s); nothing was published.",
            statusCode: StatusCodes.Status422UnprocessableEntity,
            title: "Invalid definition",
            extensions: new Dictionary<string, object?>
            {
                ["diagnostics"] = diagnostics.Select(d => new DiagnosticView(d.Path, d.Message)).ToList(),
            });
    }

    private static async Task<Ok<IReadOnlyList<DefinitionSummaryView>>> List(IDefinitionStore store, CancellationToken cancellationToken)
    {
        var summaries = await store.ListDefinitionsAsync(cancellationToken);
        return TypedResults.Ok<IReadOnlyList<DefinitionSummaryView>>(
            summaries.Select(s => new DefinitionSummaryView(s.Name, s.LatestVersion, s.Description, s.UpdatedAt)).ToList());
    }

    private static async Task<Results<Ok<DefinitionVersionsView>, ProblemHttpResult>> GetVersions(
        string name, IDefinitionStore store, CancellationToken cancellationToken)
    {
        var versions = await store.ListDefinitionVersionsAsync(name, cancellationToken);
        return versions.Count == 0
            ? Problems.NotFound($"No definition is named '{name}'.")
            : TypedResults.Ok(new DefinitionVersionsView(name, versions.Select(DefinitionView.From).ToList()));
    }

    private static async Task<Results<Ok<DefinitionView>, ProblemHttpResult>> GetVersion(
        string name, int version, IDefinitionStore store, CancellationToken cancellationToken)
    {
        var record = await store.GetDefinitionAsync(name, version, cancellationToken);
        return record is null
            ? Problems.NotFound($"Definition '{name}' has no version {version}.")
            : TypedResults.Ok(DefinitionView.From(record));
    }
}
