using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>A published definition version; <c>definition</c> is the canonical JSON it compiled from.</summary>
public sealed record DefinitionView(string Name, int Version, string? Description, DateTime CreatedAt, JsonElement Definition)
{
    public static DefinitionView From(DefinitionRecord r) => new(r.Name, r.Version, r.Description, r.CreatedAt, Json.Element(r.Json)!.Value);
}

/// <summary>A definition by its name, with its latest version.</summary>
public sealed record DefinitionSummaryView(string Name, int LatestVersion, string? Description, DateTime UpdatedAt);

/// <summary>One problem the compiler found: where (a JSON path into the definition) and what.</summary>
public sealed record DiagnosticView(string Path, string Message);

/// <summary>The 422 answer to an invalid definition: every problem the compiler found.</summary>
public sealed class DefinitionProblemDetails : Microsoft.AspNetCore.Mvc.ProblemDetails
{
    public IReadOnlyList<DiagnosticView> Diagnostics { get; init; } = [];
}
