namespace WorkflowService.Engine.Definitions;

/// <summary>A definition that passed the compiler: immutable, shared by every instance of its version.</summary>
public sealed record CompiledDefinition
{
    public required string Name { get; init; }
    public required int Version { get; init; }
    public string? Description { get; init; }
    public required string StartStepId { get; init; }
    public required string InitialVariablesJson { get; init; }
    /// <summary>Every step by id, those inside parallel branches included (ids are unique across the definition).</summary>
    public required IReadOnlyDictionary<string, CompiledStep> Steps { get; init; }
    /// <summary>The definition's own list of steps in its order (the order "next" falls through); branch steps are in their parallel step.</summary>
    public required IReadOnlyList<CompiledStep> StepOrder { get; init; }
    /// <summary>The start of the cancel path, if the definition has one.</summary>
    public string? OnCancel { get; init; }
    /// <summary>The search attributes every commit of an instance writes, in declaration order; empty for most definitions.</summary>
    public IReadOnlyList<Search.SearchAttribute> SearchAttributes
    {
        get;
        init
        {
            field = value;
            SearchAttributeNames = value.Select(a => a.Name).ToList();
        }
    } = [];

    /// <summary>The names of <see cref="SearchAttributes"/>, in declaration order.</summary>
    public IReadOnlyCollection<string> SearchAttributeNames { get; private init; } = [];
    /// <summary>The canonical JSON of the definition (what the decompiler writes; stored and returned by the API).</summary>
    public required string Json { get; init; }

    public CompiledStep Step(string id) =>
        Steps.TryGetValue(id, out var step)
            ? step
            : throw new InvalidOperationException($"definition {Name} v{Version} has no step '{id}'");

    public CompiledDefinition WithJson(string json) => this with { Json = json };

    public CompiledDefinition WithVersion(int version) => this with { Version = version };
}
