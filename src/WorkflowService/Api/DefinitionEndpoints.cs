using System.Security.Claims;
using System.Text.Json;
using Microsoft.Extensions.Options;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// Publishing and reading workflow definitions, in the caller's tenant: each tenant has its own names and versions, and
/// another tenant's definition answers as an unknown name does (404).
/// </summary>
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
        group.MapGet("/{name}", GetVersions).WithName("GetDefinition").WithSummary("The versions of a definition, oldest first, a page at a time")
            .WithDescription(InstanceEndpoints.PagedSince("every version") + " Each item names its definition (the answer used to hold the name once, then versions).")
            .RequireAuthorization(Policies.ReadDefinitions)
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status404NotFound);
        group.MapGet("/{name}/versions/{version:int}", GetVersion).WithName("GetDefinitionVersion")
            .RequireAuthorization(Policies.ReadDefinitions)
            .WithSummary("One version of a definition, as canonical JSON").ProducesProblem(StatusCodes.Status404NotFound);
        return group;
    }

    private static async Task<Results<Created<DefinitionView>, ProblemHttpResult>> Publish(
        JsonElement body, DefinitionRegistry registry, IOptions<ApiOptions> api, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var raw = body.GetRawText();
        if (raw.Length > api.Value.MaxDefinitionBytes)
        {
            return TypedResults.Problem($"The definition is {raw.Length} bytes; this service accepts at most {api.Value.MaxDefinitionBytes}.",
                statusCode: StatusCodes.Status413PayloadTooLarge, title: "Definition too large");
        }

        var diagnostics = new List<Diagnostic>();
        if (CountSteps(body) is var steps && steps > api.Value.MaxDefinitionSteps)
        {
            diagnostics.Add(new Diagnostic("$.steps", $"the definition has {steps} steps; this service accepts at most {api.Value.MaxDefinitionSteps}"));
            body = default;
        }

        var document = body.ValueKind == JsonValueKind.Object
            ? DefinitionCompiler.Parse(raw, diagnostics)
            : null;
        if (body.ValueKind != JsonValueKind.Object && diagnostics.Count == 0)
        {
            diagnostics.Add(new Diagnostic("$", "the definition must be a JSON object"));
        }

        if (document is not null)
        {
            var result = await registry.PublishAsync(user.Tenant(), document, cancellationToken);
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

    /// <summary>Every object in a "steps" array, at any depth (parallel branches hold steps of their own).</summary>
    private static int CountSteps(JsonElement element) => element.ValueKind switch
    {
        JsonValueKind.Object => element.EnumerateObject().Sum(p =>
            p.NameEquals("steps") && p.Value.ValueKind == JsonValueKind.Array
                ? p.Value.GetArrayLength() + p.Value.EnumerateArray().Sum(CountSteps)
                : CountSteps(p.Value)),
        JsonValueKind.Array => element.EnumerateArray().Sum(CountSteps),
        _ => 0,
    };

    private static async Task<Ok<IReadOnlyList<DefinitionSummaryView>>> List(IDefinitionStore store, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var summaries = await store.ListDefinitionsAsync(user.Tenant(), cancellationToken);
        return TypedResults.Ok<IReadOnlyList<DefinitionSummaryView>>(
            summaries.Select(s => new DefinitionSummaryView(s.Name, s.LatestVersion, s.Description, s.UpdatedAt)).ToList());
    }

    private static async Task<Results<Ok<PageView<DefinitionView>>, ValidationProblem, ProblemHttpResult>> GetVersions(
        string name, IDefinitionStore store, ClaimsPrincipal user, CancellationToken cancellationToken, int limit = 50, string? after = null)
    {
        if (Problems.InvalidPage(0, limit) is { } invalid)
        {
            return invalid;
        }

        int? position = null;
        if (after is not null && (position = ListCursor.DecodeVersion(after)) is null)
        {
            return Problems.InvalidAfter();
        }

        var page = await store.ListDefinitionVersionsAsync(user.Tenant(), name, position, limit, cancellationToken);
        return page.Total == 0
            ? Problems.NotFound($"No definition is named '{name}'.")
            : TypedResults.Ok(PageView<DefinitionView>.Of(page, limit, DefinitionView.From, d => ListCursor.EncodeVersion(d.Version)));
    }

    private static async Task<Results<Ok<DefinitionView>, ProblemHttpResult>> GetVersion(
        string name, int version, IDefinitionStore store, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        var record = await store.GetDefinitionAsync(user.Tenant(), name, version, cancellationToken);
        return record is null
            ? Problems.NotFound($"Definition '{name}' has no version {version}.")
            : TypedResults.Ok(DefinitionView.From(record));
    }
}
