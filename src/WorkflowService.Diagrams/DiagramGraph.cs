using System.Globalization;
using WorkflowService.Engine.Definitions;

namespace WorkflowService.Diagrams;

/// <summary>What an edge of the diagram stands for.</summary>
public enum DiagramEdgeKind
{
    /// <summary>From the start marker to the first step.</summary>
    Start,
    /// <summary>A step's <c>next</c>, explicit or the following step of the list.</summary>
    Next,
    /// <summary>A <c>waitForSignal</c>'s <c>onTimeout</c>.</summary>
    Timeout,
    /// <summary>A decision branch, labelled by its <c>when</c> expression.</summary>
    Branch,
    /// <summary>A decision's <c>otherwise</c>.</summary>
    Otherwise,
    /// <summary>A step's <c>onError</c>: where the run continues when the step fails.</summary>
    Error,
    /// <summary>From a parallel step to the first step of one of its branches, labelled with the branch's name.</summary>
    Fork,
    /// <summary>From the last step of a parallel branch to its step's join bar.</summary>
    Join,
    /// <summary>From the cancel marker to the definition's <c>onCancel</c> step: where a cancel continues.</summary>
    Cancel,
    /// <summary>
    /// From a step an instance can wait at (a signal, timer, task, call-out or child workflow) to the cancel marker: a
    /// cancel that arrives while the instance waits there leaves it along this edge for the cancel path.
    /// </summary>
    Interrupt,
}

/// <summary>What a box of the diagram stands for.</summary>
internal enum DiagramNodeRole
{
    /// <summary>The start marker.</summary>
    Start,
    Step,
    /// <summary>The join bar of a parallel step (<see cref="DiagramNode.StepId"/> is the parallel step's id).</summary>
    Join,
    /// <summary>The cancel marker, where the cancel path begins.</summary>
    Cancel,
    /// <summary>
    /// Only in the layout, never drawn as a box: an edge label, placed by the layered layout like a box in the middle
    /// of its edge, so that the edge runs through its own label and nothing else comes near it.
    /// </summary>
    Label,
}

/// <summary>A box of the diagram: a step, a parallel step's join bar, or the start or cancel marker.</summary>
internal sealed class DiagramNode(int index, DiagramNodeRole role, string? stepId, StepKind? kind, string title, string subtitle)
{
    public int Index { get; } = index;
    public DiagramNodeRole Role { get; } = role;
    /// <summary>The step's id; for a join bar, its parallel step's id; null for the markers.</summary>
    public string? StepId { get; } = stepId;
    public StepKind? Kind { get; } = kind;
    public string Title { get; } = title;
    public string Subtitle { get; } = subtitle;
    public bool IsStart => Role == DiagramNodeRole.Start;
    /// <summary>For a join bar: how many branches meet there.</summary>
    public int BranchCount { get; init; }
    public bool IsStep => Role == DiagramNodeRole.Step;
    /// <summary>The name an edge's data-from and data-to give this box: the step id, "&lt;id&gt;.join" for a join bar, "" for a marker.</summary>
    public string EndName => Role switch
    {
        DiagramNodeRole.Step => StepId!,
        DiagramNodeRole.Join => JoinName(StepId!),
        _ => "",
    };

    /// <summary>The end name of the join bar of the parallel step <paramref name="parallelStepId"/>.</summary>
    public static string JoinName(string parallelStepId) => parallelStepId + ".join";

    // A stable hash keeps every hashed collection of the layout in the same order from one process to the next.
    public override int GetHashCode() => Index;

    public override bool Equals(object? obj) => ReferenceEquals(this, obj);

    public override string ToString() => Role == DiagramNodeRole.Step ? StepId! : $"({Role.ToString().ToLowerInvariant()} {StepId})";
}

/// <summary>A transition between two boxes.</summary>
internal sealed class DiagramEdge(int index, DiagramNode source, DiagramNode target, DiagramEdgeKind kind, string? label, string? fullLabel,
    int? branch = null)
{
    public int Index { get; } = index;
    public DiagramNode Source { get; } = source;
    public DiagramNode Target { get; } = target;
    public DiagramEdgeKind Kind { get; } = kind;
    /// <summary>The text drawn beside the edge (shortened); null for an unlabelled edge.</summary>
    public string? Label { get; } = label;
    /// <summary>The whole text, shown as a tooltip.</summary>
    public string? FullLabel { get; } = fullLabel;
    public bool IsSelfLoop => ReferenceEquals(Source, Target);
    /// <summary>For a decision branch: its index in the decision's list of branches.</summary>
    public int? Branch { get; } = branch;

    public override int GetHashCode() => Index;

    public override bool Equals(object? obj) => ReferenceEquals(this, obj);
}

/// <summary>The steps and transitions of a compiled definition, in the order of its step list.</summary>
internal sealed class DiagramGraph
{
    /// <summary>Branch conditions longer than this many characters are cut (the whole text stays in the tooltip).</summary>
    public const int MaxLabelColumns = 44;

    /// <summary>Subtitle details (signal names, roles) longer than this are cut.</summary>
    private const int MaxDetailColumns = 56;

    private DiagramGraph(CompiledDefinition definition, IReadOnlyList<DiagramNode> nodes, IReadOnlyList<DiagramEdge> edges)
    {
        Definition = definition;
        Nodes = nodes;
        Edges = edges;
    }

    public CompiledDefinition Definition { get; }
    /// <summary>The start marker first, then the steps in definition order.</summary>
    public IReadOnlyList<DiagramNode> Nodes { get; }
    public IReadOnlyList<DiagramEdge> Edges { get; }

    public static DiagramGraph From(CompiledDefinition definition)
    {
        var start = new DiagramNode(0, DiagramNodeRole.Start, null, null, "start", "");
        var nodes = new List<DiagramNode> { start };
        var byId = new Dictionary<string, DiagramNode>(StringComparer.Ordinal);
        var joins = new Dictionary<string, DiagramNode>(StringComparer.Ordinal);
        // The compiler fills Steps in the order of the definition's list (each parallel step followed by its branches'
        // steps); the layout reads that order as a hint. A parallel step's join bar follows its branches.
        foreach (var step in definition.Steps.Values)
        {
            var node = new DiagramNode(nodes.Count, DiagramNodeRole.Step, step.Id, step.Kind, step.Id, Subtitle(step));
            nodes.Add(node);
            byId[step.Id] = node;
            if (step.Within is { } scope && definition.Step(scope.ParallelStepId) switch
                {
                    ParallelStep parallel => parallel.ParallelBranches[^1].Steps[^1] == step,
                    ForEachStep forEach => forEach.Body[^1] == step,
                    _ => false,
                })
            {
                joins[scope.ParallelStepId] = AddJoin(scope.ParallelStepId);
            }
        }

        DiagramNode AddJoin(string parallelStepId)
        {
            var join = new DiagramNode(nodes.Count, DiagramNodeRole.Join, parallelStepId, null, "join", "")
            {
                // A forEach's body is one branch, drawn once for all its items.
                BranchCount = definition.Step(parallelStepId) is ParallelStep parallel ? parallel.ParallelBranches.Count : 1,
            };
            nodes.Add(join);
            return join;
        }

        var cancel = definition.OnCancel is null ? null : new DiagramNode(nodes.Count, DiagramNodeRole.Cancel, null, null, "cancel", "");
        if (cancel is not null)
        {
            nodes.Add(cancel);
        }

        var edges = new List<DiagramEdge>();
        void Add(DiagramNode source, string? target, DiagramEdgeKind kind, string? label = null, string? fullLabel = null, int? branch = null)
        {
            if (target is not null && byId.TryGetValue(target, out var to))
            {
                edges.Add(new DiagramEdge(edges.Count, source, to, kind, label, fullLabel ?? label, branch));
            }
        }

        Add(start, definition.StartStepId, DiagramEdgeKind.Start);
        if (cancel is not null)
        {
            Add(cancel, definition.OnCancel, DiagramEdgeKind.Cancel);
        }

        foreach (var step in definition.Steps.Values)
        {
            var node = byId[step.Id];
            if (step is ParallelStep parallel)
            {
                foreach (var branch in parallel.ParallelBranches)
                {
                    Add(node, branch.Entry, DiagramEdgeKind.Fork, TextMetrics.Shorten(branch.Name, MaxLabelColumns), branch.Name);
                }

                // The step continues after its join.
                Add(joins[step.Id], parallel.Next, DiagramEdgeKind.Next);
            }
            else if (step is ForEachStep forEach)
            {
                Add(node, forEach.Entry, DiagramEdgeKind.Fork, "each item");
                Add(joins[step.Id], forEach.Next, DiagramEdgeKind.Next);
            }
            else if (step.Within is { } scope && step is IContinuingStep { Next: null })
            {
                // The end of a branch: it joins.
                edges.Add(new DiagramEdge(edges.Count, node, joins[scope.ParallelStepId], DiagramEdgeKind.Join, null, null));
            }
            else
            {
                Add(node, (step as IContinuingStep)?.Next, DiagramEdgeKind.Next);
            }

            Add(node, (step as WaitForSignalStep)?.Timeout?.Next, DiagramEdgeKind.Timeout, "timeout");
            if (step is DecisionStep decision)
            {
                for (var i = 0; i < decision.Branches.Count; i++)
                {
                    var branch = decision.Branches[i];
                    // With several branches the first that holds wins, so their order is part of the meaning.
                    var prefix = decision.Branches.Count > 1 ? $"{i + 1}: " : "";
                    Add(node, branch.Next, DiagramEdgeKind.Branch,
                        prefix + TextMetrics.Shorten(branch.When.Source, MaxLabelColumns - prefix.Length),
                        prefix + branch.When.Source, i);
                }

                Add(node, decision.Otherwise, DiagramEdgeKind.Otherwise, "otherwise");
            }

            Add(node, (step as IErrorHandlingStep)?.OnError?.Next, DiagramEdgeKind.Error, "error");
        }

        // The cancel path is entered from wherever the instance waits when the cancel arrives: every step that waits
        // leads to the cancel marker (the compiler keeps waits off the cancel path itself).
        if (cancel is not null)
        {
            foreach (var step in definition.Steps.Values.Where(s => s.Waits))
            {
                edges.Add(new DiagramEdge(edges.Count, byId[step.Id], cancel, DiagramEdgeKind.Interrupt, null, null));
            }
        }

        return new DiagramGraph(definition, nodes, edges);
    }

    public static string KindName(StepKind kind) => kind switch
    {
        StepKind.Assign => StepKindNames.Assign,
        StepKind.WaitForSignal => StepKindNames.WaitForSignal,
        StepKind.Delay => StepKindNames.Delay,
        StepKind.Decision => StepKindNames.Decision,
        StepKind.HumanTask => StepKindNames.HumanTask,
        StepKind.Complete => StepKindNames.Complete,
        StepKind.Fail => StepKindNames.Fail,
        StepKind.Http => StepKindNames.Http,
        StepKind.SubWorkflow => StepKindNames.SubWorkflow,
        StepKind.Parallel => StepKindNames.Parallel,
        StepKind.Emit => StepKindNames.Emit,
        StepKind.ForEach => StepKindNames.ForEach,
        _ => kind.ToString(),
    };

    /// <summary>The second line of a box: the step type and what it waits for.</summary>
    private static string Subtitle(CompiledStep step)
    {
        var details = new List<string> { KindName(step.Kind) };
        switch (step)
        {
            case WaitForSignalStep wait:
                details.Add(wait.Signal);
                if (wait.Timeout is { } timeout)
                {
                    details.Add("timeout " + Duration(timeout.After));
                }

                break;
            case DelayStep delay:
                details.Add(Duration(delay.Duration));
                break;
            case HumanTaskStep { Role: { Length: > 0 } role }:
                details.Add(role);
                break;
            case HttpStep http:
                details.Add(http.Method);
                break;
            case SubWorkflowStep subWorkflow:
                details.Add(subWorkflow.Definition);
                break;
            case ParallelStep parallel:
                details.Add($"{parallel.ParallelBranches.Count} branches");
                break;
            case ForEachStep forEach:
                details.Add(forEach.Sequential ? "sequential" : forEach.MaxConcurrency is { } limit ? $"max {limit}" : "parallel");
                if (forEach.Child is { } child)
                {
                    details.Add(child.Definition);
                }

                details.Add(forEach.Completion.Rule switch
                {
                    CompletionRule.AtLeast => $"at least {forEach.Completion.Value}",
                    CompletionRule.Fraction => $"{forEach.Completion.Value:P0}",
                    CompletionRule.FirstSuccess => "first success",
                    _ => "",
                });
                break;
        }

        return TextMetrics.Shorten(string.Join(" · ", details.Where(d => d.Length > 0)), MaxDetailColumns);
    }

    /// <summary>A compact duration: 14d, 1h30m, 45s, 250ms.</summary>
    internal static string Duration(TimeSpan value)
    {
        if (value < TimeSpan.FromSeconds(1))
        {
            return $"{(long)value.TotalMilliseconds}ms";
        }

        var parts = new List<string>();
        if (value.Days > 0)
        {
            parts.Add(value.Days.ToString(CultureInfo.InvariantCulture) + "d");
        }

        if (value.Hours > 0)
        {
            parts.Add(value.Hours.ToString(CultureInfo.InvariantCulture) + "h");
        }

        if (value.Minutes > 0)
        {
            parts.Add(value.Minutes.ToString(CultureInfo.InvariantCulture) + "m");
        }

        if (value.Seconds > 0 || value.Milliseconds > 0)
        {
            parts.Add(value.Milliseconds > 0
                ? (value.Seconds + value.Milliseconds / 1000.0).ToString("0.###", CultureInfo.InvariantCulture) + "s"
                : value.Seconds.ToString(CultureInfo.InvariantCulture) + "s");
        }

        return string.Concat(parts);
    }
}
