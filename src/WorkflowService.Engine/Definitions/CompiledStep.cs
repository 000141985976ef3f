using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>
/// A validated step with its expressions parsed and its successors resolved to step ids. Each step type is a sealed
/// record of its own that compiles itself from its <see cref="StepDocument"/>, runs itself and writes itself back.
/// </summary>
public abstract record CompiledStep
{
    private protected CompiledStep(StepCompilation source)
    {
        Id = source.Id;
        Description = source.Document.Description;
        Within = source.Within;
    }

    public string Id { get; init; }
    public abstract StepKind Kind { get; }
    public string? Description { get; init; }
    /// <summary>The parallel branch this step belongs to; null for a step of the definition's own list.</summary>
    public ParallelScope? Within { get; init; }

    /// <summary>Whether the step stops the run at a wait point (which a cancel path must never reach).</summary>
    public virtual bool Waits => false;

    /// <summary>The ids a run can go to from this step, in the order the compiler walks them.</summary>
    public abstract IEnumerable<string> Successors();

    /// <summary>The targets that are set, in their order.</summary>
    private protected static IEnumerable<string> Targets(params string?[] targets) => targets.OfType<string>();

    /// <summary>Writes the fields only this step type has; the decompiler writes the id, type, description, next and error path.</summary>
    internal abstract void Decompile(StepDocument document);

    /// <summary>Runs the step once: it continues at another step, waits, ends the instance, or forks.</summary>
    internal abstract ThreadResult Run(RunState run);
}

/// <summary>A step that continues at <see cref="Next"/> when it is done.</summary>
public interface IContinuingStep
{
    /// <summary>Null on the last step of a parallel branch without 'next': the branch joins there.</summary>
    string? Next { get; }
}

/// <summary>A step whose failing expressions can send the run down an error path instead of failing it.</summary>
public interface IErrorHandlingStep
{
    ErrorPath? OnError { get; }
}

/// <summary>A step whose result (signal payload, task result, response, child outcome) can land in a variable.</summary>
public interface IOutputStep
{
    string? Output { get; }
}

/// <summary>Where the run continues when one of a step's expressions fails, and the variable that receives the error.</summary>
public sealed record ErrorPath(string Next, string? Output);

public sealed record CompiledBranch(CompiledExpression When, string Next);

/// <summary>A branch of a parallel step: it starts at its first step and joins when it runs off the end of its steps.</summary>
public sealed record CompiledParallelBranch(string Name, IReadOnlyList<CompiledStep> Steps)
{
    public string Entry => Steps[0].Id;
}

/// <summary>
/// Where a step lives: the branch <paramref name="Branch"/> of the parallel step <paramref name="ParallelStepId"/>, or
/// the body of a forEach step of that id (<paramref name="ForEach"/>).
/// </summary>
public sealed record ParallelScope(string ParallelStepId, string Branch, bool ForEach = false)
{
    /// <summary>The scope of a forEach step's body (a branch that runs once per item).</summary>
    public static ParallelScope BodyOf(string forEachStepId) => new(forEachStepId, "body", ForEach: true);

    public override string ToString() => ForEach ? $"the body of forEach step '{ParallelStepId}'" : $"branch '{Branch}' of parallel step '{ParallelStepId}'";
}
