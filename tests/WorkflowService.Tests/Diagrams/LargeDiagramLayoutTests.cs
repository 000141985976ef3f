using WorkflowService.Diagrams;
using WorkflowService.Engine.Definitions;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Diagrams;

/// <summary>
/// The layout of large generated definitions (the claims stress case of <see cref="LargeDefinition"/> and the benchmark's
/// process with parallel steps, <see cref="LargeDefinitionGenerator"/>) at the sizes of the large-definition benchmark:
/// properties a reader relies on, checked on the layout itself.
/// </summary>
public sealed class LargeDiagramLayoutTests
{
    public static TheoryData<string, int> Large() => new()
    {
        { "claims", 300 },
        { "claims", 1000 },
        { "parallel", 300 },
        { "parallel", 1000 },
    };

    private static CompiledDefinition Generate(string shape, int steps) => shape == "claims"
        ? SvgDiagram.Compile(LargeDefinition.Json($"large-{steps}", steps))
        : SvgDiagram.Compile(LargeDefinitionGenerator.Generate($"generated-{steps}", steps).Json);

    private static DiagramLayout Layout(CompiledDefinition definition) => DiagramLayout.Compute(DiagramGraph.From(definition));

    [Theory]
    [MemberData(nameof(Large))]
    public void Every_step_is_placed_once_and_no_box_or_label_overlaps_another(string shape, int steps)
    {
        var definition = Generate(shape, steps);
        Assert.Equal(steps, definition.Steps.Count);

        var layout = Layout(definition);

        Assert.Equal(
            definition.Steps.Keys.Order(StringComparer.Ordinal),
            layout.Nodes.Where(n => n.Node.IsStep).Select(n => n.Node.StepId!).Order(StringComparer.Ordinal));
        var drawn = layout.Nodes.Select(n => (Name: n.Node.ToString(), n.Box))
            .Concat(layout.Edges.Where(e => e.LabelBox is not null).Select(e => (Name: $"label '{e.Edge.Label}'", Box: e.LabelBox!.Value)))
            .OrderBy(d => d.Box.X).ToList();
        var faults = new List<string>();
        for (var i = 0; i < drawn.Count; i++)
        {
            var (name, box) = drawn[i];
            if (box.X < 0 || box.Y < 0 || box.Right > layout.Bounds.Right || box.Bottom > layout.Bounds.Bottom)
            {
                faults.Add($"{name} {box} lies outside the drawing {layout.Bounds}");
            }

            // Sorted by left side: only the boxes that start before this one ends can overlap it.
            for (var j = i + 1; j < drawn.Count && drawn[j].Box.X < box.Right; j++)
            {
                if (box.Overlaps(drawn[j].Box))
                {
                    faults.Add($"{name} {box} overlaps {drawn[j].Name} {drawn[j].Box}");
                }
            }
        }

        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults.Take(20)));
    }

    [Theory]
    [MemberData(nameof(Large))]
    public void Every_edge_starts_on_its_source_ends_on_its_target_and_passes_through_no_other_box(string shape, int steps)
    {
        var layout = Layout(Generate(shape, steps));

        var boxes = layout.Nodes.ToDictionary(n => n.Node, n => n.Box);
        var byTop = layout.Nodes.OrderBy(n => n.Box.Y).ToArray();
        var tops = byTop.Select(n => n.Box.Y).ToArray();
        var tallest = byTop.Max(n => n.Box.Height);
        var faults = new List<string>();
        foreach (var placed in layout.Edges)
        {
            var edge = placed.Edge;
            var route = placed.Points;
            if (Distances.Distance(boxes[edge.Source], [route[0], route[0]]) > 0.5)
            {
                faults.Add($"{edge.Kind} edge {edge.Source} -> {edge.Target} starts at {route[0]}, off its source {boxes[edge.Source]}");
            }

            if (Distances.Distance(boxes[edge.Target], [route[^1], route[^1]]) > 0.5)
            {
                faults.Add($"{edge.Kind} edge {edge.Source} -> {edge.Target} ends at {route[^1]}, off its target {boxes[edge.Target]}");
            }

            // Between its ends the route keeps off every box but its own two (shrunk by a pixel: it leaves them at their border).
            for (var i = 1; i < route.Count; i++)
            {
                var (top, bottom) = (Math.Min(route[i - 1].Y, route[i].Y), Math.Max(route[i - 1].Y, route[i].Y));
                var first = Array.BinarySearch(tops, top - tallest);
                for (var k = first < 0 ? ~first : first; k < byTop.Length && byTop[k].Box.Y <= bottom; k++)
                {
                    var other = byTop[k];
                    if (other.Node != edge.Source && other.Node != edge.Target
                        && Distances.Distance(other.Box.Inflate(-1), [route[i - 1], route[i]]) == 0)
                    {
                        faults.Add($"{edge.Kind} edge {edge.Source} -> {edge.Target} passes through {other.Node} {other.Box}");
                    }
                }
            }
        }

        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults.Take(20)));
    }

    [Theory]
    [MemberData(nameof(Large))]
    public void Layers_go_downward_and_only_the_edges_that_close_a_loop_go_up(string shape, int steps)
    {
        var layout = Layout(Generate(shape, steps));

        var start = Assert.Single(layout.Nodes, n => n.Node.IsStart);
        Assert.All(layout.Nodes.Where(n => !n.Node.IsStart), n => Assert.True(n.Box.Y > start.Box.Bottom, $"{n.Node} is not below the start"));
        // Boxes of a layer share their middle: two boxes side by side are level.
        var byTop = layout.Nodes.OrderBy(n => n.Box.Y).ToList();
        for (var i = 1; i < byTop.Count; i++)
        {
            var (above, below) = (byTop[i - 1].Box, byTop[i].Box);
            Assert.True(below.Y >= above.Bottom || Math.Abs(below.Center.Y - above.Center.Y) < 0.01,
                $"{byTop[i].Node} {below} is neither level with nor below {byTop[i - 1].Node} {above}");
        }

        var centres = layout.Nodes.ToDictionary(n => n.Node, n => n.Box.Center.Y);
        var successors = layout.Edges.Where(e => !e.Edge.IsSelfLoop).ToLookup(e => e.Edge.Source, e => e.Edge.Target);
        foreach (var placed in layout.Edges.Where(e => !e.Edge.IsSelfLoop))
        {
            var (edge, route) = (placed.Edge, placed.Points);
            var down = centres[edge.Target] > centres[edge.Source];
            // A route never turns back: it runs down (or up) the whole way.
            for (var i = 1; i < route.Count; i++)
            {
                Assert.True(down ? route[i].Y >= route[i - 1].Y : route[i].Y <= route[i - 1].Y,
                    $"the {edge.Kind} edge {edge.Source} -> {edge.Target} turns back at {route[i]}");
            }

            Assert.True(down || Reaches(edge.Target, edge.Source, successors), $"the {edge.Kind} edge {edge.Source} -> {edge.Target} goes up without closing a loop");
        }
    }

    /// <summary>Whether the diagram leads from <paramref name="from"/> to <paramref name="to"/>.</summary>
    private static bool Reaches(DiagramNode from, DiagramNode to, ILookup<DiagramNode, DiagramNode> successors)
    {
        var seen = new HashSet<DiagramNode> { from };
        var queue = new Queue<DiagramNode>([from]);
        while (queue.TryDequeue(out var node))
        {
            if (node == to)
            {
                return true;
            }

            foreach (var next in successors[node].Where(seen.Add))
            {
                queue.Enqueue(next);
            }
        }

        return false;
    }
}
