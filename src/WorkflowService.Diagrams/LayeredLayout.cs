namespace WorkflowService.Diagrams;

/// <summary>
/// Our layered (Sugiyama) layout, top to bottom, in the four classic steps, each bounded so a definition of a thousand
/// steps lays out in well under a second: cycles broken by reversing the back edges of a depth-first search from the
/// start (the definition's order is its hint); longest-path layering; edges that span several layers split into chains
/// of points, one per layer; the order within each layer from the search's order, improved by a bounded number of
/// barycentre sweeps with the best order kept (crossings counted with a Fenwick tree); and x coordinates by sweeps that
/// move every item towards the mean of its neighbours in the layer above or below, each layer then put in order with
/// the least total movement that keeps the gaps (<see cref="RemoveOverlaps"/>).
/// </summary>
internal static class LayeredLayout
{
    /// <summary>Barycentre sweeps (down and up count one each) at most, however large the graph.</summary>
    private const int MaxOrderingSweeps = 24;

    /// <summary>Sweeps without fewer crossings after which the ordering stops early.</summary>
    private const int OrderingPatience = 4;

    /// <summary>Coordinate sweeps (a down and an up sweep each), then one more towards the neighbours on both sides.</summary>
    private const int PlacementRounds = 8;

    /// <summary>The least gap between two bend points of a layer.</summary>
    private const double BendGap = 12;

    /// <summary>Box centres (each box in the middle of its layer), the bend points of the edges that span several layers
    /// (from the edge's source towards its target, one in the middle of each layer passed), and each layer's middle
    /// with half its height.</summary>
    public sealed record Result(
        Dictionary<DiagramNode, DiagramPoint> Centers, Dictionary<DiagramEdge, DiagramPoint[]> Bends, Dictionary<double, double> Bands);

    /// <summary>
    /// Lays out <paramref name="nodes"/> (each drawn <paramref name="sizes"/> big) and <paramref name="edges"/> (self-loops
    /// are left out: they stay beside their box). Deterministic: the same graph gives the same layout.
    /// </summary>
    public static Result Compute(
        IReadOnlyList<DiagramNode> nodes, IReadOnlyList<DiagramEdge> edges, IReadOnlyDictionary<DiagramNode, (double Width, double Height)> sizes,
        double layerGap, double sliceGap)
    {
        var index = new Dictionary<DiagramNode, int>(nodes.Count);
        for (var i = 0; i < nodes.Count; i++)
        {
            index[nodes[i]] = i;
        }

        var links = edges.Where(e => !e.IsSelfLoop).Select(e => new Link(e, index[e.Source], index[e.Target])).ToList();
        var preorder = BreakCycles(nodes.Count, links);
        KeepLabelsBetweenTheirEnds(nodes, links);
        var layerOf = AssignLayers(nodes.Count, links);
        var graph = Proper(nodes, sizes, links, layerOf, preorder);
        Order(graph);
        PlaceHorizontally(graph, sliceGap);
        return Collect(nodes, links, graph, layerGap);
    }

    /// <summary>An edge of the layout: its ends as indexes, and whether it is drawn against the layers' direction.</summary>
    private sealed class Link(DiagramEdge edge, int source, int target)
    {
        public DiagramEdge Edge { get; } = edge;
        public int Source { get; } = source;
        public int Target { get; } = target;
        public bool Reversed { get; set; }
        /// <summary>The upper end once reversed edges are turned round.</summary>
        public int Upper => Reversed ? Target : Source;
        public int Lower => Reversed ? Source : Target;
        /// <summary>The items of the layers between its ends, from the upper end down.</summary>
        public List<int> Chain { get; } = [];
    }

    /// <summary>
    /// Reverses the edges that close a cycle: the back edges of a depth-first search from the start marker (index 0),
    /// then from every box not reached yet, in definition order, following each box's edges in the order they were
    /// drawn. Returns the order in which the search reached each box.
    /// </summary>
    private static int[] BreakCycles(int count, List<Link> links)
    {
        var outgoing = new List<Link>[count];
        var incoming = new int[count];
        for (var i = 0; i < count; i++)
        {
            outgoing[i] = [];
        }

        foreach (var link in links)
        {
            outgoing[link.Source].Add(link);
            incoming[link.Target]++;
        }

        // 0 unseen, 1 on the search's path, 2 done. The search keeps its own stack: a long chain of steps is deep.
        var state = new byte[count];
        var preorder = new int[count];
        var reached = 0;
        var stack = new Stack<(int Node, int Next)>();
        var roots = Enumerable.Range(0, count).Where(i => i == 0 || incoming[i] == 0).Concat(Enumerable.Range(0, count));
        foreach (var root in roots)
        {
            if (state[root] != 0)
            {
                continue;
            }

            state[root] = 1;
            preorder[root] = reached++;
            stack.Push((root, 0));
            while (stack.Count > 0)
            {
                var (node, next) = stack.Pop();
                if (next == outgoing[node].Count)
                {
                    state[node] = 2;
                    continue;
                }

                stack.Push((node, next + 1));
                var link = outgoing[node][next];
                switch (state[link.Target])
                {
                    case 0:
                        state[link.Target] = 1;
                        preorder[link.Target] = reached++;
                        stack.Push((link.Target, 0));
                        break;
                    case 1:
                        link.Reversed = true;
                        break;
                }
            }
        }

        return preorder;
    }

    /// <summary>
    /// An edge label is a vertex with one link in and one out. When the search reverses the link out of it (its edge
    /// closes a loop), the label would hang below both ends and its edge run down and back up; turning the link in
    /// round too puts it between its ends, on an edge that runs up the whole way. That adds no cycle: the search
    /// reached the edge's source from its target, so the links left already lead from the target down to the source.
    /// </summary>
    private static void KeepLabelsBetweenTheirEnds(IReadOnlyList<DiagramNode> nodes, List<Link> links)
    {
        var into = new Dictionary<int, Link>();
        foreach (var link in links.Where(l => nodes[l.Target].Role == DiagramNodeRole.Label))
        {
            into[link.Target] = link;
        }

        foreach (var link in links.Where(l => l.Reversed && nodes[l.Source].Role == DiagramNodeRole.Label))
        {
            if (into.TryGetValue(link.Source, out var entering))
            {
                entering.Reversed = true;
            }
        }
    }

    /// <summary>
    /// Longest-path layering: every box one layer below the lowest box that leads to it. A box nothing leads to but the
    /// start (the cancel marker without waits) then moves down to just above the highest box it leads to.
    /// </summary>
    private static int[] AssignLayers(int count, List<Link> links)
    {
        var below = new List<int>[count];
        var above = new int[count];
        for (var i = 0; i < count; i++)
        {
            below[i] = [];
        }

        foreach (var link in links)
        {
            below[link.Upper].Add(link.Lower);
            above[link.Lower]++;
        }

        var layer = new int[count];
        var waiting = (int[])above.Clone();
        var ready = new Queue<int>(Enumerable.Range(0, count).Where(i => waiting[i] == 0));
        var topological = new List<int>(count);
        while (ready.Count > 0)
        {
            var node = ready.Dequeue();
            topological.Add(node);
            foreach (var next in below[node])
            {
                layer[next] = Math.Max(layer[next], layer[node] + 1);
                if (--waiting[next] == 0)
                {
                    ready.Enqueue(next);
                }
            }
        }

        for (var i = topological.Count - 1; i >= 0; i--)
        {
            var node = topological[i];
            if (node != 0 && above[node] == 0 && below[node].Count > 0)
            {
                layer[node] = below[node].Min(n => layer[n]) - 1;
            }
        }

        return layer;
    }

    /// <summary>The layered graph: every box, and one point per layer an edge passes, with links only between neighbouring layers.</summary>
    private sealed class ProperGraph
    {
        public required List<List<int>> Layers { get; init; }
        public required List<double> Widths { get; init; }
        public required List<double> Heights { get; init; }
        public required List<int> LayerOf { get; init; }
        /// <summary>Whether an item is a box (not an edge's point).</summary>
        public required List<bool> IsBox { get; init; }
        /// <summary>Where an item sits in its layer's order.</summary>
        public required List<int> Position { get; init; }
        public required List<List<int>> Up { get; init; }
        public required List<List<int>> Down { get; init; }
        public double[] X { get; set; } = [];
        /// <summary>Scratch space of the ordering: each item's barycentre.</summary>
        public double[] Measure { get; set; } = [];
    }

    private static ProperGraph Proper(
        IReadOnlyList<DiagramNode> nodes, IReadOnlyDictionary<DiagramNode, (double Width, double Height)> sizes, List<Link> links, int[] layerOf,
        int[] preorder)
    {
        var graph = new ProperGraph
        {
            Layers = [], Widths = [], Heights = [], LayerOf = [], IsBox = [], Position = [], Up = [], Down = [],
        };
        // The initial order within a layer: boxes in the order the search reached them, an edge's points just after the
        // box the edge leaves from.
        var key = new List<double>();
        int Add(int layer, double width, double height, bool box, double order)
        {
            while (graph.Layers.Count <= layer)
            {
                graph.Layers.Add([]);
            }

            graph.Layers[layer].Add(graph.Widths.Count);
            graph.Widths.Add(width);
            graph.Heights.Add(height);
            graph.LayerOf.Add(layer);
            graph.IsBox.Add(box);
            graph.Position.Add(0);
            graph.Up.Add([]);
            graph.Down.Add([]);
            key.Add(order);
            return graph.Widths.Count - 1;
        }

        for (var i = 0; i < nodes.Count; i++)
        {
            var (width, height) = sizes[nodes[i]];
            Add(layerOf[i], width, height, box: true, preorder[i]);
        }

        foreach (var link in links)
        {
            var previous = link.Upper;
            for (var layer = layerOf[link.Upper] + 1; layer < layerOf[link.Lower]; layer++)
            {
                var point = Add(layer, 0, 0, box: false, preorder[link.Upper] + 0.5);
                link.Chain.Add(point);
                graph.Down[previous].Add(point);
                graph.Up[point].Add(previous);
                previous = point;
            }

            graph.Down[previous].Add(link.Lower);
            graph.Up[link.Lower].Add(previous);
        }

        foreach (var layer in graph.Layers)
        {
            layer.Sort((a, b) => key[a] != key[b] ? key[a].CompareTo(key[b]) : a.CompareTo(b));
            Renumber(graph, layer);
        }

        return graph;
    }

    private static void Renumber(ProperGraph graph, List<int> layer)
    {
        for (var i = 0; i < layer.Count; i++)
        {
            graph.Position[layer[i]] = i;
        }
    }

    /// <summary>
    /// Crossing reduction: alternate sweeps down (each layer sorted by the mean position of its items' neighbours above)
    /// and up (below), keeping the order with the fewest crossings seen; an item with no neighbour on the side looked at
    /// keeps its place. At most <see cref="MaxOrderingSweeps"/> sweeps, fewer when they stop helping.
    /// </summary>
    private static void Order(ProperGraph graph)
    {
        graph.Measure = new double[graph.Widths.Count];
        var best = graph.Layers.Select(l => l.ToList()).ToList();
        var fewest = Crossings(graph);
        var idle = 0;
        for (var sweep = 0; sweep < MaxOrderingSweeps && fewest > 0 && idle < OrderingPatience; sweep++)
        {
            var down = sweep % 2 == 0;
            if (down)
            {
                for (var i = 1; i < graph.Layers.Count; i++)
                {
                    SortByBarycentre(graph, graph.Layers[i], graph.Up);
                }
            }
            else
            {
                for (var i = graph.Layers.Count - 2; i >= 0; i--)
                {
                    SortByBarycentre(graph, graph.Layers[i], graph.Down);
                }
            }

            var crossings = Crossings(graph);
            if (crossings < fewest)
            {
                fewest = crossings;
                best = graph.Layers.Select(l => l.ToList()).ToList();
                idle = 0;
            }
            else
            {
                idle++;
            }
        }

        for (var i = 0; i < graph.Layers.Count; i++)
        {
            graph.Layers[i] = best[i];
            Renumber(graph, best[i]);
        }
    }

    private static void SortByBarycentre(ProperGraph graph, List<int> layer, List<List<int>> neighbours)
    {
        var measure = graph.Measure;
        foreach (var item in layer)
        {
            measure[item] = Mean(neighbours[item], null, graph.Position[item], n => graph.Position[n]);
        }

        // Ties keep the current order, so a sweep that cannot improve a layer leaves it alone.
        layer.Sort((a, b) => measure[a] != measure[b] ? measure[a].CompareTo(measure[b]) : graph.Position[a].CompareTo(graph.Position[b]));
        Renumber(graph, layer);
    }

    /// <summary>The mean of <paramref name="value"/> over the neighbours on one side (or both), <paramref name="none"/> without any.</summary>
    private static double Mean(List<int> neighbours, List<int>? others, double none, Func<int, double> value)
    {
        var count = neighbours.Count + (others?.Count ?? 0);
        if (count == 0)
        {
            return none;
        }

        var sum = 0.0;
        foreach (var n in neighbours)
        {
            sum += value(n);
        }

        foreach (var n in others ?? [])
        {
            sum += value(n);
        }

        return sum / count;
    }

    /// <summary>All crossings between neighbouring layers: the inversions of the lower ends once the links are sorted by their upper ends.</summary>
    private static long Crossings(ProperGraph graph)
    {
        var total = 0L;
        var pairs = new List<(int Upper, int Lower)>();
        for (var i = 0; i + 1 < graph.Layers.Count; i++)
        {
            pairs.Clear();
            foreach (var item in graph.Layers[i])
            {
                pairs.AddRange(graph.Down[item].Select(n => (graph.Position[item], graph.Position[n])));
            }

            pairs.Sort();
            var tree = new int[graph.Layers[i + 1].Count + 1];
            for (var k = 0; k < pairs.Count; k++)
            {
                // Links seen so far whose lower end lies right of this one's cross it.
                var atOrLeft = 0;
                for (var j = pairs[k].Lower + 1; j > 0; j -= j & -j)
                {
                    atOrLeft += tree[j];
                }

                total += k - atOrLeft;
                for (var j = pairs[k].Lower + 1; j < tree.Length; j += j & -j)
                {
                    tree[j]++;
                }
            }
        }

        return total;
    }

    /// <summary>
    /// X coordinates: each layer packed left to right, then sweeps that move every item towards the mean x of its
    /// neighbours above (down sweeps) or below (up sweeps), and a last sweep towards the neighbours on both sides; after
    /// every move the layer keeps its order and its gaps with the least total movement.
    /// </summary>
    private static void PlaceHorizontally(ProperGraph graph, double sliceGap)
    {
        graph.X = new double[graph.Widths.Count];
        foreach (var layer in graph.Layers)
        {
            var x = 0.0;
            for (var i = 0; i < layer.Count; i++)
            {
                x += i == 0 ? 0 : Gap(graph, layer[i - 1], layer[i], sliceGap);
                graph.X[layer[i]] = x;
            }
        }

        for (var round = 0; round <= PlacementRounds; round++)
        {
            if (round < PlacementRounds)
            {
                for (var i = 1; i < graph.Layers.Count; i++)
                {
                    MoveTowards(graph, graph.Layers[i], graph.Up, null, sliceGap);
                }

                for (var i = graph.Layers.Count - 2; i >= 0; i--)
                {
                    MoveTowards(graph, graph.Layers[i], graph.Down, null, sliceGap);
                }
            }
            else
            {
                for (var i = 0; i < graph.Layers.Count; i++)
                {
                    MoveTowards(graph, graph.Layers[i], graph.Up, graph.Down, sliceGap);
                }
            }
        }
    }

    private static void MoveTowards(ProperGraph graph, List<int> layer, List<List<int>> neighbours, List<List<int>>? others, double sliceGap)
    {
        var wishes = new double[layer.Count];
        var gaps = new double[layer.Count];
        for (var i = 0; i < layer.Count; i++)
        {
            var item = layer[i];
            wishes[i] = Mean(neighbours[item], others?[item], graph.X[item], n => graph.X[n]);
            gaps[i] = i == 0 ? 0 : Gap(graph, layer[i - 1], item, sliceGap);
        }

        var placed = RemoveOverlaps(wishes, gaps);
        for (var i = 0; i < layer.Count; i++)
        {
            graph.X[layer[i]] = placed[i];
        }
    }

    /// <summary>The least distance between the centres of two neighbours of a layer: boxes keep the slice gap, bend points less.</summary>
    private static double Gap(ProperGraph graph, int left, int right, double sliceGap) =>
        ((graph.Widths[left] + graph.Widths[right]) / 2)
        + (graph.IsBox[left] && graph.IsBox[right] ? sliceGap : graph.IsBox[left] || graph.IsBox[right] ? sliceGap / 2 : BendGap);

    /// <summary>
    /// New positions for items in a row, in their order, as close to <paramref name="wishes"/> as the least distances
    /// <paramref name="gaps"/> (gaps[i] between items i - 1 and i) allow, in the least-squares sense: 1-D overlap removal by
    /// merging blocks, as in Dwyer, Marriott and Stuckey's "Fast node overlap removal".
    /// </summary>
    public static double[] RemoveOverlaps(IReadOnlyList<double> wishes, IReadOnlyList<double> gaps)
    {
        // A block: consecutive items at fixed offsets from the block's position, which is the mean of their wishes.
        var blocks = new List<(int First, int Last, double Position)>();
        var offsets = new double[wishes.Count];
        for (var i = 0; i < wishes.Count; i++)
        {
            var block = (First: i, Last: i, Position: wishes[i]);
            while (blocks.Count > 0)
            {
                var previous = blocks[^1];
                var required = previous.Position + offsets[previous.Last] + gaps[block.First];
                if (block.Position + offsets[block.First] >= required - 1e-9)
                {
                    break;
                }

                // Merge: the block's items follow the previous block's last item at the least distance.
                var shift = offsets[previous.Last] + gaps[block.First] - offsets[block.First];
                var sum = 0.0;
                for (var k = previous.First; k <= block.Last; k++)
                {
                    if (k >= block.First)
                    {
                        offsets[k] += shift;
                    }

                    sum += wishes[k] - offsets[k];
                }

                block = (previous.First, block.Last, sum / (block.Last - previous.First + 1));
                blocks.RemoveAt(blocks.Count - 1);
            }

            blocks.Add(block);
        }

        var result = new double[wishes.Count];
        foreach (var block in blocks)
        {
            for (var k = block.First; k <= block.Last; k++)
            {
                result[k] = block.Position + offsets[k];
            }
        }

        return result;
    }

    /// <summary>Layer by layer top to bottom, each as high as its tallest box, <paramref name="layerGap"/> apart; everything centred on its layer's middle.</summary>
    private static Result Collect(IReadOnlyList<DiagramNode> nodes, List<Link> links, ProperGraph graph, double layerGap)
    {
        var middles = new double[graph.Layers.Count];
        var bands = new Dictionary<double, double>();
        var top = 0.0;
        for (var i = 0; i < graph.Layers.Count; i++)
        {
            // A layer of bend points only still needs room for the lines to pass.
            var height = Math.Max(DiagramLayout.LabelHeight, graph.Layers[i].Max(item => graph.Heights[item]));
            middles[i] = top + (height / 2);
            bands[middles[i]] = height / 2;
            top += height + layerGap;
        }

        var centers = new Dictionary<DiagramNode, DiagramPoint>(nodes.Count);
        for (var i = 0; i < nodes.Count; i++)
        {
            centers[nodes[i]] = new DiagramPoint(graph.X[i], middles[graph.LayerOf[i]]);
        }

        var bends = new Dictionary<DiagramEdge, DiagramPoint[]>();
        foreach (var link in links.Where(l => l.Chain.Count > 0))
        {
            var points = link.Chain.Select(p => new DiagramPoint(graph.X[p], middles[graph.LayerOf[p]]));
            bends[link.Edge] = (link.Reversed ? points.Reverse() : points).ToArray();
        }

        return new Result(centers, bends, bands);
    }
}
