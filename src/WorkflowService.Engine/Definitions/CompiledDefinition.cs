namespace WorkflowService.Engine.Definitions;

/// <summary>A definition that passed the compiler: immutable, shared by every instance of its version.</summary>
public sealed class CompiledDefinition
{
    public required string Name { get; init; }
    public required int Version { get; init; }
    public string? Description { get; init; }
    public required string StartStepId { get; init; }
    public required string InitialVariablesJson { get; init; }
    public required IReadOnlyDictionary<string, CompiledStep> Steps { get; init; }
    /// <summary>The definition as submitted, normalised (the text stored and returned by the API).</summary>
    public required string Json { get; init; }

    public CompiledStep Step(string id) =>
        Steps.TryGetValue(id, out var step)
            ? step
            : throw new InvalidOperationException($"definition {Name} v{Version} has no step '{id}'");
}
