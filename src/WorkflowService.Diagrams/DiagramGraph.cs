using System.Globalization;
using QuikGraph;
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
}

/// <summary>A box of the diagram: a step, or the start marker (<see cref="StepId"/> null).</summary>
internal sealed class DiagramNode(int index, string? stepId, StepKind? kind, string title, string subtitle)
{
    public int Index { get; } = index;
    public string? StepId { get; } = stepId;
    public StepKind? Kind { get; } = kind;
    public string Title { get; } = title;
    public string Subtitle { get; } = subtitle;
    public bool IsStart => StepId is null;

    // A stable hash keeps every hashed collection of the layout in the same order from one process to the next.
    public override int GetHashCode() => Index;

    public override bool Equals(object? obj) => ReferenceEquals(this, obj);

    public override string ToString() => StepId ?? "(start)";
}

/// <summary>A transition between two boxes.</summary>
internal sealed class DiagramEdge(int index, DiagramNode source, DiagramNode target, DiagramEdgeKind kind, string? label, string? fullLabel)
    : IEdge<DiagramNode>
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
        var start = new DiagramNode(0, null, null, "start", "");
        var nodes = new List<DiagramNode> { start };
        var byId = new Dictionary<string, DiagramNode>(StringComparer.Ordinal);
        // The compiler fills Steps in the order of the definition's list; the layout reads that order as a hint.
        foreach (var step in definition.Steps.Values)
        {
            var node = new DiagramNode(nodes.Count, step.Id, step.Kind, step.Id, Subtitle(step));
            nodes.Add(node);
            byId[step.Id] = node;
        }

        var edges = new List<DiagramEdge>();
        void Add(DiagramNode source, string? target, DiagramEdgeKind kind, string? label = null, string? fullLabel = null)
        {
            if (target is not null && byId.TryGetValue(target, out var to))
            {
                edges.Add(new DiagramEdge(edges.Count, source, to, kind, label, fullLabel ?? label));
            }
        }

        Add(start, definition.StartStepId, DiagramEdgeKind.Start);
        foreach (var step in definition.Steps.Values)
        {
            var node = byId[step.Id];
            Add(node, step.Next, DiagramEdgeKind.Next);
            Add(node, step.OnTimeout, DiagramEdgeKind.Timeout, "timeout");
            for (var i = 0; i < step.Branches.Count; i++)
            {
                var branch = step.Branches[i];
                // With several branches the first that holds wins, so their order is part of the meaning.
                var prefix = step.Branches.Count > 1 ? $"{i + 1}: " : "";
                Add(node, branch.Next, DiagramEdgeKind.Branch,
                    prefix + TextMetrics.Shorten(branch.When.Source, MaxLabelColumns - prefix.Length),
                    prefix + branch.When.Source);
            }

            Add(node, step.Otherwise, DiagramEdgeKind.Otherwise, "otherwise");
            Add(node, step.OnError, DiagramEdgeKind.Error, "error");
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
        _ => kind.ToString(),
    };

    /// <summary>The second line of a box: the step type and what it waits for.</summary>
    private static string Subtitle(CompiledStep step)
    {
        var details = new List<string> { KindName(step.Kind) };
        switch (step.Kind)
        {
            case StepKind.WaitForSignal:
                details.Add(step.Signal ?? "");
                if (step.Timeout is { } timeout)
                {
                    details.Add("timeout " + Duration(timeout));
                }

                break;
            case StepKind.Delay when step.Duration is { } duration:
                details.Add(Duration(duration));
                break;
            case StepKind.HumanTask when step.Role is { Length: > 0 } role:
                details.Add(role);
                break;
            case StepKind.Http:
                details.Add(step.Method ?? "");
                break;
            case StepKind.SubWorkflow:
                details.Add(step.Definition ?? "");
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
