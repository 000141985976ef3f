using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>A validated step with its expressions parsed and its successors resolved to step ids.</summary>
public sealed class CompiledStep
{
    public required string Id { get; init; }
    public required StepKind Kind { get; init; }
    public string? Description { get; init; }
    /// <summary>The step to run next. Null on a step that does not continue, and on a step that ends its parallel branch (it joins).</summary>
    public string? Next { get; init; }
    /// <summary>The parallel branch this step belongs to; null for a step of the definition's own list.</summary>
    public ParallelScope? Within { get; init; }

    public IReadOnlyList<KeyValuePair<string, CompiledExpression>> Assignments { get; init; } = [];

    public string? Signal { get; init; }
    public TimeSpan? Timeout { get; init; }
    public string? OnTimeout { get; init; }
    public string? Output { get; init; }
    public TimeSpan? Duration { get; init; }

    public IReadOnlyList<CompiledBranch> Branches { get; init; } = [];
    public string? Otherwise { get; init; }

    /// <summary>A parallel step's branches, in the order they start.</summary>
    public IReadOnlyList<CompiledParallelBranch> ParallelBranches { get; init; } = [];

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

/// <summary>A branch of a parallel step: it starts at its first step and joins when it runs off the end of its steps.</summary>
public sealed record CompiledParallelBranch(string Name, IReadOnlyList<CompiledStep> Steps)
{
    public string Entry => Steps[0].Id;
}

/// <summary>Where a step lives: the branch <paramref name="Branch"/> of the parallel step <paramref name="ParallelStepId"/>.</summary>
public sealed record ParallelScope(string ParallelStepId, string Branch)
{
    public override string ToString() => $"branch '{Branch}' of parallel step '{ParallelStepId}'";
}
