using WorkflowService.Engine.Execution;

namespace WorkflowService.Engine.Definitions;

/// <summary>Runs named branches side by side and continues when every branch has run to its end (join all).</summary>
public sealed record ParallelStep : CompiledStep, IContinuingStep
{
    internal static readonly StepType Type = new(StepField.Next | StepField.Branches, Compile);

    private ParallelStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Parallel;
    /// <summary>Where the run continues after the join (parallel steps do not nest, so there always is one).</summary>
    public required string Next { get; init; }
    /// <summary>The branches, in the order they start.</summary>
    public required IReadOnlyList<CompiledParallelBranch> ParallelBranches { get; init; }

    /// <summary>
    /// Each branch has a unique name and at least one step, and its steps are compiled in the branch's scope (their
    /// transitions stay inside the branch). Parallel steps do not nest.
    /// </summary>
    private static ParallelStep? Compile(StepCompilation c)
    {
        if (!DefinitionCompiler.IsValidName(c.Document.Id))
        {
            return null;
        }

        if (c.Within is not null)
        {
            c.Error("type", $"a parallel step cannot be inside {c.Within}: parallel steps do not nest (run the inner branches as branches of the outer step)");
            return null;
        }

        if (c.Document.Branches is not { Count: > 0 } documents)
        {
            c.Error("branches", "a parallel step needs at least one branch");
            return null;
        }

        var branches = new List<CompiledParallelBranch>();
        var names = new Dictionary<string, int>(StringComparer.Ordinal);
        for (var b = 0; b < documents.Count; b++)
        {
            var branch = documents[b];
            var bp = $"branches[{b}]";
            if (branch is null)
            {
                c.Error(bp, "a branch must be an object");
                continue;
            }

            if (!DefinitionCompiler.IsValidName(branch.Name))
            {
                c.Error($"{bp}.name", "name is required: letters, digits, '.', '_' or '-', starting with a letter or digit");
            }
            else if (!names.TryAdd(branch.Name, b))
            {
                c.Error($"{bp}.name", $"duplicate branch name '{branch.Name}' (first used at {c.Path}.branches[{names[branch.Name]}])");
            }

            if (branch.When is not null)
            {
                c.Error($"{bp}.when", "when does not apply to a parallel branch (every branch runs)");
            }

            if (branch.Next is not null)
            {
                c.Error($"{bp}.next", "next does not apply to a parallel branch (the branch starts at its first step; the parallel step's next follows the join)");
            }

            if (branch.Steps is not { Count: > 0 })
            {
                c.Error($"{bp}.steps", "a parallel branch needs at least one step");
                continue;
            }

            var steps = c.CompileBranch(branch.Steps, $"{c.Path}.{bp}.steps", new ParallelScope(c.Id, branch.Name ?? $"#{b}"));
            if (steps.Count == branch.Steps.Count && branch.Name is not null)
            {
                branches.Add(new CompiledParallelBranch(branch.Name, steps));
            }
        }

        return c.Next is null ? null : new ParallelStep(c) { Next = c.Next, ParallelBranches = branches };
    }

    public override IEnumerable<string> Successors() => ParallelBranches.Select(b => b.Entry).Prepend(Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Parallel;
        document.Branches = ParallelBranches
            .Select(b => new BranchDocument { Name = b.Name, Steps = DefinitionDecompiler.DecompileList(b.Steps) })
            .ToList();
    }

    internal override ThreadResult Run(RunState run) => new(ThreadEnd.Forks, Parallel: this);
}
