using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Sets variables from expressions, in order, and continues.</summary>
public sealed record AssignStep : CompiledStep, IContinuingStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(StepField.Next | StepField.Set | StepField.OnError, Compile);

    private AssignStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Assign;
    public string? Next { get; init; }
    public required IReadOnlyList<KeyValuePair<string, CompiledExpression>> Assignments { get; init; }
    public ErrorPath? OnError { get; init; }

    private static AssignStep? Compile(StepCompilation c)
    {
        var assignments = new List<KeyValuePair<string, CompiledExpression>>();
        if (c.Document.Set is not { Count: > 0 } set)
        {
            c.Error("set", "set must name at least one variable");
            return null;
        }

        foreach (var (name, source) in set)
        {
            c.Variable(name, $"set.{name}");
            if (c.Expr(source, $"set.{name}", required: true) is { } expression)
            {
                assignments.Add(new(name, expression));
            }
        }

        return new AssignStep(c) { Next = c.Next, Assignments = assignments, OnError = c.ErrorPath };
    }

    public override IEnumerable<string> Successors() => Targets(Next, OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Assign;
        document.Set = Assignments.ToDictionary(a => a.Key, a => a.Value.Source);
    }

    internal override ThreadResult Run(RunState run)
    {
        foreach (var (variable, expression) in Assignments)
        {
            run.Scope.Assign(variable, expression);
        }

        run.Append(HistoryEventTypes.StepCompleted, Id, null);
        return ThreadResult.ContinueAt(Next);
    }
}
