namespace WorkflowService.Diagrams;

/// <summary>A node with its place: the box drawn for it.</summary>
internal sealed record PlacedNode(DiagramNode Node, DiagramBox Box);

/// <summary>An edge with its route (from the source's border to the target's) and, when labelled, its label's box.</summary>
internal sealed record PlacedEdge(DiagramEdge Edge, IReadOnlyList<DiagramPoint> Points, DiagramBox? LabelBox);

/// <summary>
/// Where everything goes. The layered layout (<see cref="LayeredLayout"/>) places the boxes top to bottom, sized from
/// their text, and the label of every edge between two boxes as a box of its own in the middle of its edge, and routes
/// long edges through the layers; this class clips the routes to the boxes, draws each labelled edge straight
/// through its label (so a label cannot be read as another edge's), separates parallel edges, and draws self-loops
/// beside their box with their label beside the loop. Coordinates start at (0, 0).
/// </summary>
internal sealed class DiagramLayout
{
    /// <summary>Where along a route a label may sit, as fractions of its length, nearer the middle first.</summary>
    private static readonly double[] SideHeights = [0.5, 0.35, 0.65, 0.2, 0.8];

    public const double TitleFontSize = 13;
    public const double SubtitleFontSize = 11;
    public const double LabelFontSize = 11;
    public const double NodeHeight = 46;
    public const double LabelHeight = 16;
    public const double StartSize = 16;
    public const double JoinHeight = 8;
    public const double MarkerHeight = 20;
    /// <summary>Width of a join bar per branch: room for the branches' arrows to arrive side by side.</summary>
    private const double JoinWidthPerBranch = 56;

    private const double NodePaddingX = 14;
    private const double MinNodeWidth = 96;
    private const double LabelPaddingX = 5;
    /// <summary>Vertical room between layers (edge labels have layers of their own).</summary>
    private const double LayerGap = 40;
    private const double SliceGap = 40;
    private const double ParallelEdgeSpacing = 16;
    private const double SelfLoopReach = 26;
    private const double SelfLoopSpacing = 12;
    /// <summary>Clear space kept between a label and a box, an arrowhead or another label.</summary>
    private const double LabelClearance = 3;
    /// <summary>How many free label positions that are not clearly their edge's are passed over in search of one that is.</summary>
    private const int CrossingSearchBudget = 400;
    /// <summary>How much nearer its own edge than any other a label placed beside its edge must be.</summary>
    private const double OwnershipMargin = 8;

    private DiagramLayout(DiagramGraph graph, IReadOnlyList<PlacedNode> nodes, IReadOnlyList<PlacedEdge> edges, DiagramBox bounds)
    {
        Graph = graph;
        Nodes = nodes;
        Edges = edges;
        Bounds = bounds;
    }

    public DiagramGraph Graph { get; }
    public IReadOnlyList<PlacedNode> Nodes { get; }
    public IReadOnlyList<PlacedEdge> Edges { get; }
    /// <summary>Everything drawn: boxes, routes and labels; its corner is (0, 0).</summary>
    public DiagramBox Bounds { get; }

    /// <summary>The box size of a node: its two lines of text and padding, wider for the shapes with slanted or round sides.</summary>
    public static (double Width, double Height) NodeSize(DiagramNode node)
    {
        switch (node.Role)
        {
            case DiagramNodeRole.Start:
                return (StartSize, StartSize);
            case DiagramNodeRole.Join:
                return (Math.Max(MinNodeWidth, JoinWidthPerBranch * BranchCount(node)), JoinHeight);
            case DiagramNodeRole.Cancel:
                return (Math.Ceiling(TextMetrics.Width(node.Title, LabelFontSize) + (2 * LabelPaddingX) + 6), MarkerHeight);
        }

        var text = Math.Max(TextMetrics.Width(node.Title, TitleFontSize), TextMetrics.Width(node.Subtitle, SubtitleFontSize));
        var extra = node.Kind switch
        {
            Engine.Definitions.StepKind.Decision => NodeHeight * 0.6, // the hexagon's points
            Engine.Definitions.StepKind.Complete or Engine.Definitions.StepKind.Fail => 12, // the round ends
            _ => 0,
        };
        return (Math.Ceiling(Math.Max(MinNodeWidth, text + (2 * NodePaddingX) + extra)), NodeHeight);
    }

    private static int BranchCount(DiagramNode join) => join.BranchCount;

    /// <summary>The box of an edge label's text (without its position).</summary>
    public static (double Width, double Height) LabelSize(string label) =>
        (Math.Ceiling(TextMetrics.Width(label, LabelFontSize) + (2 * LabelPaddingX)), LabelHeight);

    public static DiagramLayout Compute(DiagramGraph graph)
    {
        var sizes = graph.Nodes.ToDictionary(n => n, NodeSize);

        // Room for self-loops and their labels on both sides of a box (the layout centres a box on its slot).
        var selfLoops = graph.Edges.Where(e => e.IsSelfLoop).GroupBy(e => e.Source).ToDictionary(g => g.Key, g => g.ToList());
        var layoutSizes = graph.Nodes.ToDictionary(n => n, n =>
        {
            var (width, height) = sizes[n];
            if (selfLoops.TryGetValue(n, out var loops))
            {
                var reach = SelfLoopReach + ((loops.Count - 1) * SelfLoopSpacing);
                var label = loops.Max(l => l.Label is null ? 0 : LabelSize(l.Label).Width);
                width += 2 * (reach + label + 8);
            }

            return (width, height);
        });

        // Every labelled edge between two boxes runs through a vertex of its label's size (as in Graphviz's dot): the
        // layered layout then gives each label its own place in the middle of its edge, kept apart from every box, label
        // and other edge like a box is, and the edge is drawn through its label, so no label can be read as another's.
        var layoutNodes = new List<DiagramNode>(graph.Nodes);
        var layoutEdges = new List<DiagramEdge>();
        var labelNodes = new Dictionary<DiagramEdge, (DiagramNode Node, DiagramEdge Into, DiagramEdge OutOf)>();
        foreach (var edge in graph.Edges)
        {
            if (edge.Label is null || edge.IsSelfLoop)
            {
                layoutEdges.Add(edge);
                continue;
            }

            var node = new DiagramNode(graph.Nodes.Count + labelNodes.Count, DiagramNodeRole.Label, null, null, edge.Label, "");
            var into = new DiagramEdge(graph.Edges.Count + (2 * labelNodes.Count), edge.Source, node, edge.Kind, null, null);
            var outOf = new DiagramEdge(graph.Edges.Count + (2 * labelNodes.Count) + 1, node, edge.Target, edge.Kind, null, null);
            labelNodes[edge] = (node, into, outOf);
            var (width, height) = LabelSize(edge.Label);
            sizes[node] = (width, height);
            layoutSizes[node] = (width, height);
            layoutNodes.Add(node);
            layoutEdges.Add(into);
            layoutEdges.Add(outOf);
        }

        var (centers, bends, bands) = LayeredLayout.Compute(layoutNodes, layoutEdges, layoutSizes, LayerGap, SliceGap);

        var boxes = layoutNodes.ToDictionary(n => n, n =>
        {
            var (width, height) = sizes[n];
            return DiagramBox.Around(centers[n], width, height);
        });

        var routes = new Dictionary<DiagramEdge, List<DiagramPoint>>();
        var labels = new Dictionary<DiagramEdge, DiagramBox>();
        foreach (var edge in graph.Edges)
        {
            if (edge.IsSelfLoop)
            {
                routes[edge] = SelfLoop(boxes[edge.Source], selfLoops[edge.Source].IndexOf(edge));
            }
            else if (labelNodes.TryGetValue(edge, out var label))
            {
                // Straight through the label's layer at the label's middle, as through a bend: the label's opaque
                // background covers the line inside it.
                var box = boxes[label.Node];
                var points = new List<DiagramPoint> { boxes[edge.Source].Center };
                points.AddRange(Bends(label.Into, points[^1], bends, bands));
                var half = bands.GetValueOrDefault(box.Center.Y, box.Height / 2);
                var down = points[^1].Y < box.Center.Y;
                points.Add(box.Center.Offset(0, down ? -half : half));
                points.Add(box.Center.Offset(0, down ? half : -half));
                points.AddRange(Bends(label.OutOf, points[^1], bends, bands));
                points.Add(boxes[edge.Target].Center);
                routes[edge] = Connect(points, edge, boxes[edge.Source], boxes[edge.Target]);
                labels[edge] = box;
            }
            else
            {
                var points = new List<DiagramPoint> { boxes[edge.Source].Center };
                points.AddRange(Bends(edge, points[^1], bends, bands));
                points.Add(boxes[edge.Target].Center);
                routes[edge] = Connect(points, edge, boxes[edge.Source], boxes[edge.Target]);
            }
        }

        SeparateParallelEdges(graph, boxes, routes);

        foreach (var (edge, box) in PlaceSelfLoopLabels(graph, boxes, routes, labels))
        {
            labels[edge] = box;
        }

        // Only the boxes of the diagram's own nodes are drawn as boxes; the label vertices are drawn as labels.
        foreach (var label in labelNodes.Values)
        {
            boxes.Remove(label.Node);
        }

        // Move everything so the drawing starts at (0, 0).
        var bounds = boxes.Values.Aggregate((a, b) => a.Union(b));
        foreach (var point in routes.Values.SelectMany(r => r))
        {
            bounds = bounds.Union(new DiagramBox(point.X - 2, point.Y - 2, 4, 4));
        }

        foreach (var label in labels.Values)
        {
            bounds = bounds.Union(label);
        }

        var (dx, dy) = (-bounds.X, -bounds.Y);
        var nodes = graph.Nodes.Select(n => new PlacedNode(n, boxes[n].Offset(dx, dy))).ToList();
        var edges = graph.Edges.Select(e => new PlacedEdge(
            e,
            routes[e].Select(p => p.Offset(dx, dy)).ToList(),
            labels.TryGetValue(e, out var box) ? box.Offset(dx, dy) : null)).ToList();
        return new DiagramLayout(graph, nodes, edges, bounds.Offset(dx, dy));
    }

    /// <summary>
    /// The points an edge of the layout passes through between its ends, from <paramref name="from"/> on. A bend point
    /// sits in the middle of a layer: the route crosses that layer straight down (or up) at the point's x, over the
    /// layer's whole height, where the layout left room, so slanted stretches stay in the gaps between layers, where
    /// there are no boxes and no labels.
    /// </summary>
    private static IEnumerable<DiagramPoint> Bends(
        DiagramEdge edge, DiagramPoint from, Dictionary<DiagramEdge, DiagramPoint[]> bends, Dictionary<double, double> bands)
    {
        if (!bends.TryGetValue(edge, out var inner))
        {
            yield break;
        }

        var last = from;
        foreach (var bend in inner)
        {
            var half = bands.GetValueOrDefault(bend.Y, LabelHeight / 2);
            var down = last.Y < bend.Y;
            yield return bend with { Y = bend.Y + (down ? -half : half) };
            last = bend with { Y = bend.Y + (down ? half : -half) };
            yield return last;
        }
    }

    /// <summary>Replaces the first and last points (centres) with the ports on the source's and target's borders.</summary>
    private static List<DiagramPoint> Connect(List<DiagramPoint> points, DiagramEdge edge, DiagramBox source, DiagramBox target)
    {
        var result = new List<DiagramPoint>(points);
        result[0] = Port(source, edge.Source, result[0], result[1]);
        result[^1] = Port(target, edge.Target, result[^1], result[^2]);
        return result;
    }

    /// <summary>
    /// Where the line from <paramref name="from"/> (inside the box) towards <paramref name="toward"/> (in another layer)
    /// leaves the box: always through its bottom or top side, kept off the slanted or round ends of the shape.
    /// </summary>
    private static DiagramPoint Port(DiagramBox box, DiagramNode node, DiagramPoint from, DiagramPoint toward)
    {
        var dy = toward.Y - from.Y;
        if (Math.Abs(dy) < 1e-6)
        {
            return from;
        }

        var y = dy > 0 ? box.Bottom : box.Y;
        var x = from.X + ((toward.X - from.X) * (y - from.Y) / dy);
        var margin = node.Kind switch
        {
            Engine.Definitions.StepKind.Decision => (box.Height * 0.3) + 4,
            Engine.Definitions.StepKind.Complete or Engine.Definitions.StepKind.Fail => box.Height / 2,
            _ => 8,
        };
        margin = Math.Min(margin, box.Width / 2);
        return new DiagramPoint(Math.Clamp(x, box.X + margin, box.Right - margin), y);
    }

    /// <summary>A loop out of the box's right side and back, further out for each further loop of the same box.</summary>
    private static List<DiagramPoint> SelfLoop(DiagramBox box, int index)
    {
        var reach = SelfLoopReach + (index * SelfLoopSpacing);
        var spread = Math.Min(box.Height / 2 - 4, 9 + (index * 3));
        var cy = box.Center.Y;
        return
        [
            new(box.Right, cy - spread),
            new(box.Right + reach, cy - spread),
            new(box.Right + reach, cy + spread),
            new(box.Right, cy + spread),
        ];
    }

    /// <summary>
    /// Edges between the same two boxes with no bend (two branches to one step, or a loop between neighbours) would be
    /// drawn on top of each other: they are spread side by side.
    /// </summary>
    private static void SeparateParallelEdges(DiagramGraph graph, Dictionary<DiagramNode, DiagramBox> boxes, Dictionary<DiagramEdge, List<DiagramPoint>> routes)
    {
        var groups = graph.Edges
            .Where(e => !e.IsSelfLoop && routes[e].Count == 2)
            .GroupBy(e => (Math.Min(e.Source.Index, e.Target.Index), Math.Max(e.Source.Index, e.Target.Index)))
            .Where(g => g.Count() > 1);
        foreach (var group in groups)
        {
            var edges = group.ToList();
            var source = boxes[edges[0].Source];
            var target = boxes[edges[0].Target];
            var limit = (Math.Min(source.Width, target.Width) / 2) - 6;
            var spacing = Math.Min(ParallelEdgeSpacing, 2 * limit / Math.Max(1, edges.Count - 1));
            for (var i = 0; i < edges.Count; i++)
            {
                var offset = (i - ((edges.Count - 1) / 2.0)) * spacing;
                var edge = edges[i];
                var from = boxes[edge.Source].Center.Offset(offset, 0);
                var to = boxes[edge.Target].Center.Offset(offset, 0);
                routes[edge] = Connect([from, to], edge, boxes[edge.Source], boxes[edge.Target]);
            }
        }
    }

    /// <summary>
    /// The labels of self-loops (the layout placed every other label), beside their loop: the first position that
    /// covers no box, arrowhead or label and is nearer its own loop than any other edge by a clear margin; failing that
    /// (within a search budget), the free position most clearly its loop's; failing that, a place beyond everything.
    /// </summary>
    private static Dictionary<DiagramEdge, DiagramBox> PlaceSelfLoopLabels(
        DiagramGraph graph, Dictionary<DiagramNode, DiagramBox> boxes, Dictionary<DiagramEdge, List<DiagramPoint>> routes,
        Dictionary<DiagramEdge, DiagramBox> labels)
    {
        // Obstacles: every box, every label placed, and a little square at every arrowhead.
        var obstacles = boxes.Values.Select(b => b.Inflate(LabelClearance)).ToList();
        obstacles.AddRange(labels.Values.Select(b => b.Inflate(LabelClearance)));
        obstacles.AddRange(routes.Values.Select(r => DiagramBox.Around(r[^1], 12, 12)));
        var placed = new Dictionary<DiagramEdge, DiagramBox>();
        var extent = boxes.Values.Aggregate((a, b) => a.Union(b));

        foreach (var edge in graph.Edges.Where(e => e.Label is not null && e.IsSelfLoop))
        {
            var (width, height) = LabelSize(edge.Label!);
            var route = routes[edge];
            DiagramBox? best = null;
            var bestMargin = double.NegativeInfinity;
            var budget = CrossingSearchBudget;
            foreach (var candidate in Candidates(route, width, height, selfLoop: true))
            {
                if (!Free(candidate))
                {
                    continue;
                }

                var own = DistanceToRoute(candidate, route);
                var margin = routes.Where(r => !ReferenceEquals(r.Key, edge)).Select(r => DistanceToRoute(candidate, r.Value))
                    .DefaultIfEmpty(double.PositiveInfinity).Min() - own;
                if (margin > bestMargin)
                {
                    (best, bestMargin) = (candidate, margin);
                }

                if (margin >= OwnershipMargin || --budget == 0)
                {
                    break;
                }
            }

            var box = best ?? FarRight(route, width, height);
            placed[edge] = box;
            obstacles.Add(box.Inflate(LabelClearance));
        }

        return placed;

        bool Free(DiagramBox candidate) => obstacles.TrueForAll(o => !o.Overlaps(candidate));

        // Beyond everything on the right, at the edge's height, below any label already put there.
        DiagramBox FarRight(List<DiagramPoint> route, double width, double height)
        {
            var right = obstacles.Max(o => o.Right);
            var box = DiagramBox.Around(PointAt(route, 0.5), width, height) with { X = Math.Max(right, extent.Right) + 8 };
            while (!Free(box))
            {
                box = box.Offset(0, height + LabelClearance);
            }

            return box;
        }
    }

    /// <summary>The least distance between a box and a route (0 when the route touches or crosses the box).</summary>
    internal static double DistanceToRoute(DiagramBox box, IReadOnlyList<DiagramPoint> route)
    {
        var least = double.PositiveInfinity;
        for (var i = 1; i < route.Count; i++)
        {
            least = Math.Min(least, DistanceToSegment(box, route[i - 1], route[i]));
        }

        return least;
    }

    private static double DistanceToSegment(DiagramBox box, DiagramPoint a, DiagramPoint b)
    {
        if (SegmentCrosses(box, a, b))
        {
            return 0;
        }

        // Apart, the nearest points are an end of the segment and the box, or a corner of the box and the segment.
        DiagramPoint[] corners = [new(box.X, box.Y), new(box.Right, box.Y), new(box.X, box.Bottom), new(box.Right, box.Bottom)];
        return Math.Min(Math.Min(PointToBox(a), PointToBox(b)), corners.Min(c => PointToSegment(c, a, b)));

        double PointToBox(DiagramPoint p)
        {
            var dx = Math.Max(Math.Max(box.X - p.X, 0), p.X - box.Right);
            var dy = Math.Max(Math.Max(box.Y - p.Y, 0), p.Y - box.Bottom);
            return Math.Sqrt((dx * dx) + (dy * dy));
        }
    }

    private static double PointToSegment(DiagramPoint p, DiagramPoint a, DiagramPoint b)
    {
        var (dx, dy) = (b.X - a.X, b.Y - a.Y);
        var length = (dx * dx) + (dy * dy);
        var t = length == 0 ? 0 : Math.Clamp((((p.X - a.X) * dx) + ((p.Y - a.Y) * dy)) / length, 0, 1);
        return DiagramPoint.Distance(p, new DiagramPoint(a.X + (t * dx), a.Y + (t * dy)));
    }

    /// <summary>Whether the segment passes through the box (Liang-Barsky clipping).</summary>
    private static bool SegmentCrosses(DiagramBox box, DiagramPoint a, DiagramPoint b)
    {
        var (t0, t1) = (0.0, 1.0);
        var (dx, dy) = (b.X - a.X, b.Y - a.Y);
        return Clip(-dx, a.X - box.X) && Clip(dx, box.Right - a.X) && Clip(-dy, a.Y - box.Y) && Clip(dy, box.Bottom - a.Y);

        bool Clip(double p, double q)
        {
            if (p == 0)
            {
                return q >= 0;
            }

            var r = q / p;
            if (p < 0)
            {
                t0 = Math.Max(t0, r);
            }
            else
            {
                t1 = Math.Min(t1, r);
            }

            return t0 <= t1;
        }
    }

    /// <summary>Label positions to try, best first: on the edge around its middle, beside it, then further and further away.</summary>
    private static IEnumerable<DiagramBox> Candidates(List<DiagramPoint> route, double width, double height, bool selfLoop)
    {
        const double gap = 5;
        if (selfLoop)
        {
            // Beside the loop's outer side.
            var outer = new DiagramPoint(route[1].X, (route[1].Y + route[2].Y) / 2);
            yield return new DiagramBox(outer.X + gap, outer.Y - (height / 2), width, height);
        }

        foreach (var fraction in new[] { 0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8 })
        {
            var at = PointAt(route, fraction);
            yield return DiagramBox.Around(at, width, height);
            yield return new DiagramBox(at.X + gap, at.Y - (height / 2), width, height);
            yield return new DiagramBox(at.X - gap - width, at.Y - (height / 2), width, height);
        }

        // Further to the side, at the same heights, nearer first.
        var heights = SideHeights.Select(f => PointAt(route, f)).ToArray();
        const double step = 8;
        for (var k = 1; k <= 100; k++)
        {
            foreach (var at in heights)
            {
                yield return new DiagramBox(at.X + gap + (k * step), at.Y - (height / 2), width, height);
                yield return new DiagramBox(at.X - gap - width - (k * step), at.Y - (height / 2), width, height);
            }
        }

        // Rings of growing size around the middle, nearest positions first; the label stays between the heights of the
        // edge's ends, so it is not read as belonging to a step above or below the edge.
        var middle = PointAt(route, 0.5);
        var top = route.Min(p => p.Y);
        var bottom = route.Max(p => p.Y);
        for (var ring = 1; ring <= 60; ring++)
        {
            var offsets = new List<(double Dx, double Dy)>();
            for (var i = -ring; i <= ring; i++)
            {
                offsets.Add((i * step, -ring * step));
                offsets.Add((i * step, ring * step));
                if (Math.Abs(i) != ring)
                {
                    offsets.Add((-ring * step, i * step));
                    offsets.Add((ring * step, i * step));
                }
            }

            foreach (var (dx, dy) in offsets.OrderBy(o => (o.Dx * o.Dx) + (o.Dy * o.Dy)).ThenBy(o => o.Dy).ThenBy(o => o.Dx))
            {
                var y = middle.Y + dy;
                if (selfLoop || (y >= top && y <= bottom))
                {
                    yield return DiagramBox.Around(middle.Offset(dx, dy), width, height);
                }
            }
        }
    }

    /// <summary>The point at a fraction of the route's length.</summary>
    private static DiagramPoint PointAt(List<DiagramPoint> route, double fraction)
    {
        var total = 0.0;
        for (var i = 1; i < route.Count; i++)
        {
            total += DiagramPoint.Distance(route[i - 1], route[i]);
        }

        var remaining = total * fraction;
        for (var i = 1; i < route.Count; i++)
        {
            var length = DiagramPoint.Distance(route[i - 1], route[i]);
            if (remaining <= length && length > 0)
            {
                var t = remaining / length;
                return new DiagramPoint(route[i - 1].X + (t * (route[i].X - route[i - 1].X)), route[i - 1].Y + (t * (route[i].Y - route[i - 1].Y)));
            }

            remaining -= length;
        }

        return route[^1];
    }
}
