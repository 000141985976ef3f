using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>A validated step with its expressions parsed and its successors resolved to step ids.</summary>
public sealed class CompiledStep
{
    public required string Id { get; init; }
    public required StepKind Kind { get; init; }
    public string? Description { get; init; }
    public string? Next { get; init; }

    public IReadOnlyList<KeyValuePair<string, CompiledExpression>> Assignments { get; init; } = [];

    public string? Signal { get; init; }
    public TimeSpan? Timeout { get; init; }
    public string? OnTimeout { get; init; }
    public string? Output { get; init; }
    public TimeSpan? Duration { get; init; }

    public IReadOnlyList<CompiledBranch> Branches { get; init; } = [];
    public string? Otherwise { get; init; }

    public string? Title { get; init; }
    public CompiledExpression? Assignee { get; init; }
    public string? Role { get; init; }
    public CompiledExpression? Data { get; init; }

    public CompiledExpression? Result { get; init; }
    public CompiledExpression? Reason { get; init; }

    public string? Method { get; init; }
    public CompiledExpression? Url { get; init; }
    public CompiledExpression? Body { get; init; }
    public IReadOnlyList<KeyValuePair<string, CompiledExpression>> Headers { get; init; } = [];
    public int? Retries { get; init; }

    public string? Definition { get; init; }
    public int? DefinitionVersion { get; init; }
    public CompiledExpression? Input { get; init; }

    /// <summary>Where the run continues when one of this step's expressions fails (instead of retrying and faulting).</summary>
    public string? OnError { get; init; }
    public string? ErrorOutput { get; init; }
}

public sealed record CompiledBranch(CompiledExpression When, string Next);
