using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Continues at the first branch whose condition holds, else at 'otherwise'.</summary>
public sealed record DecisionStep : CompiledStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(StepField.Branches | StepField.Otherwise | StepField.OnError, Compile);

    private DecisionStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Decision;
    /// <summary>The branches in the order they are tried.</summary>
    public required IReadOnlyList<CompiledBranch> Branches { get; init; }
    public string? Otherwise { get; init; }
    public ErrorPath? OnError { get; init; }

    private static DecisionStep? Compile(StepCompilation c)
    {
        var branches = new List<CompiledBranch>();
        if (c.Document.Branches is not { Count: > 0 } documents)
        {
            c.Error("branches", "a decision needs at least one branch");
        }
        else
        {
            for (var b = 0; b < documents.Count; b++)
            {
                var branch = documents[b];
                var bp = $"branches[{b}]";
                var when = c.Expr(branch?.When, $"{bp}.when", required: true);
                var target = c.Target(branch?.Next, $"{bp}.next", required: true);
                c.NotAllowed(branch?.Name, $"{bp}.name");
                c.NotAllowed(branch?.Steps, $"{bp}.steps");
                if (when is not null && target is not null)
                {
                    branches.Add(new CompiledBranch(when, target));
                }
            }
        }

        var otherwise = c.Target(c.Document.Otherwise, "otherwise", required: false);
        return new DecisionStep(c) { Branches = branches, Otherwise = otherwise, OnError = c.ErrorPath };
    }

    public override IEnumerable<string> Successors() => Branches.Select(b => b.Next).Concat(Targets(Otherwise, OnError?.Next));

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Decision;
        document.Branches = Branches.Select(b => new BranchDocument { When = b.When.Source, Next = b.Next }).ToList();
        document.Otherwise = Otherwise;
    }

    internal override ThreadResult Run(RunState run)
    {
        string? target = null;
        int? taken = null;
        for (var i = 0; i < Branches.Count; i++)
        {
            if (run.Scope.EvaluateCondition(Branches[i].When))
            {
                (target, taken) = (Branches[i].Next, i);
                break;
            }
        }

        target ??= Otherwise ?? throw new ExpressionFailedException($"no branch of decision '{Id}' matched and it has no 'otherwise'");
        // Which branch held (its index in the list; none for otherwise): several branches may lead to one step.
        run.Append(HistoryEventTypes.BranchTaken, Id, new { next = target, branch = taken });
        return ThreadResult.ContinueAt(target);
    }
}
