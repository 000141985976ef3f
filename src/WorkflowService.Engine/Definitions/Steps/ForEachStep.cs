using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>
/// Runs its body once per item of an array (or starts a child instance per item), side by side or one after the
/// other, and continues when its completion rule is met. The body is a branch as a parallel step has: its steps wait,
/// time out, call out and create tasks, each item with its own wait. Inside it, <c>item</c> and <c>itemIndex</c> name
/// the item.
/// </summary>
public sealed record ForEachStep : CompiledStep, IContinuingStep, IOutputStep
{
    internal static readonly StepType Type = new(
        StepField.Next | StepField.Items | StepField.Steps | StepField.Mode | StepField.MaxConcurrency | StepField.Completion
        | StepField.ToleratedFailures | StepField.Definition | StepField.Version | StepField.Input | StepField.Result | StepField.Output,
        Compile);

    /// <summary>The largest count a completion rule or concurrency may name (items are bounded by Engine:MaxForEachItems).</summary>
    private const int MaxCount = 1_000_000;

    private ForEachStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.ForEach;
    /// <summary>Where the run continues once the completion rule is met.</summary>
    public required string Next { get; init; }
    /// <summary>The expression that gives the array.</summary>
    public required CompiledExpression Items { get; init; }
    /// <summary>The body, run once per item; in child mode one subWorkflow step the compiler made.</summary>
    public required IReadOnlyList<CompiledStep> Body { get; init; }
    /// <summary>The child definition started per item; null when the body is written out.</summary>
    public ForEachChild? Child { get; init; }
    /// <summary>How many items may be open at once; 1 when sequential, null for as many as there are.</summary>
    public int? MaxConcurrency { get; init; }
    public bool Sequential { get; init; }
    public ForEachCompletion Completion { get; init; } = ForEachCompletion.All;
    /// <summary>How many items may fail before the step fails (and the instance with it).</summary>
    public int ToleratedFailures { get; init; }
    /// <summary>An item's result when its body ends; null: the payload that resumed the item last (a child's output in child mode).</summary>
    public CompiledExpression? Result { get; init; }
    /// <summary>The variable that receives the results, in item order (null for an item that failed or did not run).</summary>
    public string? Output { get; init; }

    public string Entry => Body[0].Id;

    /// <summary>How many items may run at once for <paramref name="count"/> items.</summary>
    public int OpenLimit(int count) => Sequential ? 1 : Math.Max(1, Math.Min(MaxConcurrency ?? count, count));

    /// <summary>The step id the compiler gives the subWorkflow step of child mode.</summary>
    public static string ChildStepId(string forEachStepId) => $"{forEachStepId}.child";

    /// <summary>
    /// The body a document declares: its steps, or the one subWorkflow step that child mode stands for; null when it
    /// has neither. The compiler declares and compiles the ids of this list.
    /// </summary>
    internal static List<StepDocument>? BodyOf(StepDocument document) =>
        document.Steps ?? (document.Definition is null || document.Id is null ? null :
        [
            new StepDocument
            {
                Id = ChildStepId(document.Id),
                Type = StepKindNames.SubWorkflow,
                Definition = document.Definition,
                Version = document.Version,
                Input = document.Input ?? "item",
            },
        ]);

    private static ForEachStep? Compile(StepCompilation c)
    {
        var document = c.Document;
        if (!DefinitionCompiler.IsValidName(document.Id))
        {
            return null;
        }

        if (c.Within is not null)
        {
            c.Error("type", $"a forEach step cannot be inside {c.Within}: forEach and parallel steps do not nest");
            return null;
        }

        var items = c.Expr(document.Items, "items", required: true);
        var sequential = document.Mode switch
        {
            null or "parallel" => false,
            "sequential" => true,
            _ => Invalid(c, "mode", "mode must be 'parallel' or 'sequential'"),
        };
        if (document.MaxConcurrency is { } limit && (limit < 1 || limit > MaxCount))
        {
            c.Error("maxConcurrency", $"maxConcurrency must be 1 to {MaxCount}");
        }
        else if (document.MaxConcurrency is not null && sequential)
        {
            c.Error("maxConcurrency", "maxConcurrency applies to mode 'parallel' only (a sequential forEach runs one item at a time)");
        }

        if (document.ToleratedFailures is < 0 or > MaxCount)
        {
            c.Error("toleratedFailures", $"toleratedFailures must be 0 to {MaxCount}");
        }

        var completion = CompileCompletion(c, document.Completion);
        var result = c.Expr(document.Result, "result", required: false);
        c.Variable(document.Output, "output");

        ForEachChild? child = null;
        if (document.Steps is not null && document.Definition is not null)
        {
            c.Error("definition", "a forEach step has either steps (its body) or definition (a child instance per item), not both");
            return null;
        }

        if (document.Steps is null && document.Definition is null)
        {
            c.Error("steps", "a forEach step needs steps (its body, run once per item) or definition (a child instance per item)");
            return null;
        }

        if (document.Steps is { Count: 0 })
        {
            c.Error("steps", "a forEach body needs at least one step");
            return null;
        }

        if (document.Definition is not null)
        {
            if (!DefinitionCompiler.IsValidName(document.Definition))
            {
                c.Error("definition", "definition must be the name of the child definition");
                return null;
            }

            if (document.Version is <= 0)
            {
                c.Error("version", "version must be a positive version number");
                return null;
            }

            if (c.Expr(document.Input, "input", required: false) is null && document.Input is not null)
            {
                return null;
            }

            child = new ForEachChild(document.Definition, document.Version, document.Input);
        }
        else if (document.Version is not null || document.Input is not null)
        {
            c.Error(document.Version is not null ? "version" : "input", "version and input apply to a forEach with definition (a child instance per item)");
            return null;
        }

        var body = BodyOf(document)!;
        var steps = c.CompileBranch(body, child is null ? $"{c.Path}.steps" : c.Path, ParallelScope.BodyOf(c.Id));
        if (items is null || completion is null || steps.Count != body.Count || c.Next is null)
        {
            return null;
        }

        return new ForEachStep(c)
        {
            Next = c.Next,
            Items = items,
            Body = steps,
            Child = child,
            Sequential = sequential,
            MaxConcurrency = document.MaxConcurrency,
            Completion = completion,
            ToleratedFailures = document.ToleratedFailures ?? 0,
            Result = result,
            Output = document.Output,
        };
    }

    private static bool Invalid(StepCompilation c, string field, string message)
    {
        c.Error(field, message);
        return false;
    }

    private static ForEachCompletion? CompileCompletion(StepCompilation c, CompletionDocument? document)
    {
        if (document is null)
        {
            return ForEachCompletion.All;
        }

        var set = (document.AtLeast is null ? 0 : 1) + (document.Fraction is null ? 0 : 1) + (document.FirstSuccess is null ? 0 : 1);
        if (set != 1)
        {
            c.Error("completion", "completion takes exactly one of atLeast (a count), fraction (0 to 1) or firstSuccess (true); leave it out to wait for every item");
            return null;
        }

        switch (document)
        {
            case { AtLeast: { } atLeast } when atLeast is < 1 or > MaxCount:
                c.Error("completion.atLeast", $"atLeast must be 1 to {MaxCount}");
                return null;
            case { AtLeast: { } atLeast }:
                return new ForEachCompletion(CompletionRule.AtLeast, atLeast);
            case { Fraction: { } fraction } when !(fraction > 0 && fraction <= 1):
                c.Error("completion.fraction", "fraction must be above 0 and at most 1");
                return null;
            case { Fraction: { } fraction }:
                return new ForEachCompletion(CompletionRule.Fraction, fraction);
            case { FirstSuccess: true }:
                return new ForEachCompletion(CompletionRule.FirstSuccess, 1);
            default:
                c.Error("completion.firstSuccess", "firstSuccess must be true (leave completion out to wait for every item)");
                return null;
        }
    }

    public override IEnumerable<string> Successors() => [Next, Entry];

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.ForEach;
        document.Items = Items.Source;
        document.Mode = Sequential ? "sequential" : null;
        document.MaxConcurrency = MaxConcurrency;
        document.Completion = Completion.Rule switch
        {
            CompletionRule.AtLeast => new CompletionDocument { AtLeast = (int)Completion.Value },
            CompletionRule.Fraction => new CompletionDocument { Fraction = Completion.Value },
            CompletionRule.FirstSuccess => new CompletionDocument { FirstSuccess = true },
            _ => null,
        };
        document.ToleratedFailures = ToleratedFailures == 0 ? null : ToleratedFailures;
        if (Child is { } child)
        {
            document.Definition = child.Definition;
            document.Version = child.Version;
            document.Input = child.Input;
        }
        else
        {
            document.Steps = DefinitionDecompiler.DecompileList(Body);
        }

        document.Result = Result?.Source;
        document.Output = Output;
    }

    internal override ThreadResult Run(RunState run) => new(ThreadEnd.Forks, ForEach: this);
}

/// <summary>The child definition a forEach starts per item, and the input expression as written (null: the item).</summary>
public sealed record ForEachChild(string Definition, int? Version, string? Input);

public enum CompletionRule { All, AtLeast, Fraction, FirstSuccess }

/// <summary>When a forEach step is done: when every item has ended, or when enough of them have succeeded.</summary>
public sealed record ForEachCompletion(CompletionRule Rule, double Value)
{
    public static readonly ForEachCompletion All = new(CompletionRule.All, 0);

    /// <summary>How many of <paramref name="count"/> items must succeed; null: every item must end.</summary>
    public int? Required(int count) => Rule switch
    {
        CompletionRule.All => null,
        // The small margin keeps 0.3 of 10 at 3 (floating point makes it 3.0000000000000004).
        CompletionRule.Fraction => (int)Math.Ceiling((Value * count) - 1e-9),
        _ => (int)Value,
    };
}
