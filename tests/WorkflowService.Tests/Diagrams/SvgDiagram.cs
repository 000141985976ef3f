using System.Xml.Linq;
using Microsoft.Extensions.Options;
using WorkflowService.Diagrams;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Tests.Diagrams;

/// <summary>Distances between what a diagram draws, computed here independently of the layout's own.</summary>
public static class Distances
{
    /// <summary>The least distance between a box and a route of straight lines (0 when the route touches the box).</summary>
    public static double Distance(DiagramBox box, IReadOnlyList<DiagramPoint> route) =>
        Enumerable.Range(1, Math.Max(1, route.Count - 1)).Min(i => Distance(box, route[i - 1], route[Math.Min(i, route.Count - 1)]));

    private static double Distance(DiagramBox box, DiagramPoint a, DiagramPoint b)
    {
        DiagramPoint[] corners = [new(box.X, box.Y), new(box.Right, box.Y), new(box.Right, box.Bottom), new(box.X, box.Bottom)];
        if (Inside(a) || Inside(b) || Enumerable.Range(0, 4).Any(i => Intersect(a, b, corners[i], corners[(i + 1) % 4])))
        {
            return 0;
        }

        return Math.Min(Math.Min(ToBox(a), ToBox(b)), corners.Min(c => ToSegment(c, a, b)));

        bool Inside(DiagramPoint p) => p.X >= box.X && p.X <= box.Right && p.Y >= box.Y && p.Y <= box.Bottom;

        double ToBox(DiagramPoint p)
        {
            var dx = Math.Max(0, Math.Max(box.X - p.X, p.X - box.Right));
            var dy = Math.Max(0, Math.Max(box.Y - p.Y, p.Y - box.Bottom));
            return Math.Sqrt((dx * dx) + (dy * dy));
        }
    }

    private static double ToSegment(DiagramPoint p, DiagramPoint a, DiagramPoint b)
    {
        var (dx, dy) = (b.X - a.X, b.Y - a.Y);
        var squared = (dx * dx) + (dy * dy);
        var t = squared == 0 ? 0 : Math.Clamp((((p.X - a.X) * dx) + ((p.Y - a.Y) * dy)) / squared, 0, 1);
        return DiagramPoint.Distance(p, new DiagramPoint(a.X + (t * dx), a.Y + (t * dy)));
    }

    private static bool Intersect(DiagramPoint p1, DiagramPoint p2, DiagramPoint q1, DiagramPoint q2)
    {
        var d1 = Cross(q1, q2, p1);
        var d2 = Cross(q1, q2, p2);
        var d3 = Cross(p1, p2, q1);
        var d4 = Cross(p1, p2, q2);
        return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
            || (d1 == 0 && On(q1, q2, p1)) || (d2 == 0 && On(q1, q2, p2)) || (d3 == 0 && On(p1, p2, q1)) || (d4 == 0 && On(p1, p2, q2));

        static double Cross(DiagramPoint a, DiagramPoint b, DiagramPoint c) => ((b.X - a.X) * (c.Y - a.Y)) - ((b.Y - a.Y) * (c.X - a.X));

        static bool On(DiagramPoint a, DiagramPoint b, DiagramPoint c) =>
            c.X >= Math.Min(a.X, b.X) && c.X <= Math.Max(a.X, b.X) && c.Y >= Math.Min(a.Y, b.Y) && c.Y <= Math.Max(a.Y, b.Y);
    }
}

/// <summary>
/// A rendered diagram read back as XML: the boxes of its steps and edge labels come from the data-box attributes the
/// renderer writes beside what it draws, so the checks measure what a viewer sees.
/// </summary>
public sealed class SvgDiagram
{
    public static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    public sealed record Step(string Id, string Kind, string? State, DiagramBox Box, IReadOnlyList<string> Texts);

    public sealed record Label(string Text, string Kind, string From, string To, DiagramBox Box, int Edge);

    /// <summary>A drawn edge: its index (data-edge), kind, the names of its ends, its CSS classes and its route.</summary>
    public sealed record Route(int Index, string Kind, string From, string To, IReadOnlyList<string> Classes, IReadOnlyList<DiagramPoint> Points);

    private SvgDiagram(XDocument document)
    {
        Document = document;
        var root = document.Root!;
        Assert.Equal(Svg + "svg", root.Name);
        Width = double.Parse((string)root.Attribute("width")!, System.Globalization.CultureInfo.InvariantCulture);
        Height = double.Parse((string)root.Attribute("height")!, System.Globalization.CultureInfo.InvariantCulture);
        Steps = root.Descendants(Svg + "g").Where(g => g.Attribute("data-step") is not null).Select(g => new Step(
            (string)g.Attribute("data-step")!,
            (string)g.Attribute("data-kind")!,
            (string?)g.Attribute("data-state"),
            DiagramBox.Parse((string)g.Attribute("data-box")!),
            g.Elements(Svg + "text").Select(t => t.Value).ToList())).ToList();
        Labels = root.Descendants(Svg + "g").Where(g => g.Attribute("data-label") is not null).Select(g => new Label(
            (string)g.Attribute("data-label")!,
            (string)g.Attribute("data-kind")!,
            (string)g.Attribute("data-from")!,
            (string)g.Attribute("data-to")!,
            DiagramBox.Parse((string)g.Attribute("data-box")!),
            int.Parse((string)g.Attribute("data-edge")!, System.Globalization.CultureInfo.InvariantCulture))).ToList();
        Routes = root.Descendants(Svg + "g").Where(g => ((string?)g.Attribute("class"))?.Split(' ').Contains("edge") == true).Select(g => new Route(
            int.Parse((string)g.Attribute("data-edge")!, System.Globalization.CultureInfo.InvariantCulture),
            (string)g.Attribute("data-kind")!,
            (string)g.Attribute("data-from")!,
            (string)g.Attribute("data-to")!,
            ((string)g.Attribute("class")!).Split(' '),
            PathPoints((string)g.Element(Svg + "path")!.Attribute("d")!))).ToList();
        Start = root.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "start")
            .Select(g => DiagramBox.Parse((string)g.Attribute("data-box")!)).Single();
        Joins = root.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "join")
            .ToDictionary(g => (string)g.Attribute("data-join")!, g => DiagramBox.Parse((string)g.Attribute("data-box")!));
        Cancel = root.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "cancel")
            .Select(g => DiagramBox.Parse((string)g.Attribute("data-box")!)).Cast<DiagramBox?>().SingleOrDefault();
    }

    public XDocument Document { get; }
    public double Width { get; }
    public double Height { get; }
    public IReadOnlyList<Step> Steps { get; }
    public IReadOnlyList<Label> Labels { get; }
    public DiagramBox Start { get; }
    /// <summary>The join bar of each parallel step, by the step's id.</summary>
    public IReadOnlyDictionary<string, DiagramBox> Joins { get; }
    /// <summary>The cancel marker, when the definition has a cancel path.</summary>
    public DiagramBox? Cancel { get; }

    /// <summary>The edges drawn (their kind, and the data-from and data-to names of their ends).</summary>
    public IEnumerable<(string Kind, string From, string To)> Edges => Routes.Select(r => (r.Kind, r.From, r.To));

    /// <summary>Every edge drawn, with its route.</summary>
    public IReadOnlyList<Route> Routes { get; }

    /// <summary>The points of a path of straight lines ("M x,y L x,y ...").</summary>
    private static List<DiagramPoint> PathPoints(string d) =>
        d.Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(part =>
        {
            Assert.True(part[0] is 'M' or 'L', $"unexpected path command in '{d}'");
            var xy = part[1..].Split(',');
            return new DiagramPoint(
                double.Parse(xy[0], System.Globalization.CultureInfo.InvariantCulture),
                double.Parse(xy[1], System.Globalization.CultureInfo.InvariantCulture));
        }).ToList();

    /// <summary>
    /// Labels that could be read as another edge's: a label's box must be nearer its own edge's route than any other
    /// edge's (so it touches no other edge).
    /// </summary>
    public IReadOnlyList<string> LabelOwnershipFaults()
    {
        var faults = new List<string>();
        foreach (var label in Labels)
        {
            var own = Routes.Where(r => r.Index == label.Edge).ToList();
            if (own.Count != 1)
            {
                faults.Add($"label '{label.Text}' belongs to {own.Count} drawn edges (data-edge {label.Edge})");
                continue;
            }

            var mine = Distances.Distance(label.Box, own[0].Points);
            foreach (var other in Routes.Where(r => r.Index != label.Edge))
            {
                var distance = Distances.Distance(label.Box, other.Points);
                if (distance <= mine)
                {
                    faults.Add($"label '{label.Text}' ({label.From} -> {label.To}) is {distance:0.#} from the {other.Kind} edge " +
                               $"{other.From} -> {other.To} and {mine:0.#} from its own");
                }
            }
        }

        return faults;
    }

    /// <summary>
    /// Boxes nothing leads to (every box but the start has an edge drawn into it, except a step the definition itself
    /// never leads to) and edges that do not reach their ends (each route starts on its source's box and ends on its
    /// target's).
    /// </summary>
    public IReadOnlyList<string> ConnectionFaults(CompiledDefinition definition)
    {
        var faults = new List<string>();
        var named = Steps.ToDictionary(s => s.Id, s => s.Box);
        foreach (var (id, box) in Joins)
        {
            named[id + ".join"] = box;
        }

        // What the definition leads to: its first step, every step's successors, the branches of parallel steps, the cancel path.
        var targets = definition.Steps.Values.SelectMany(s => s.Successors())
            .Concat(definition.Steps.Values.OfType<ParallelStep>().SelectMany(p => p.ParallelBranches.Select(b => b.Entry)))
            .Append(definition.StartStepId).Append(definition.OnCancel).OfType<string>().ToHashSet(StringComparer.Ordinal);
        foreach (var step in Steps.Where(s => targets.Contains(s.Id) && !Routes.Any(r => r.To == s.Id)))
        {
            faults.Add($"nothing leads to step {step.Id}");
        }

        foreach (var join in Joins.Keys.Where(j => !Routes.Any(r => r.To == j + ".join")))
        {
            faults.Add($"nothing leads to the join of {join}");
        }

        if (Cancel is not null && !Routes.Any(r => r.Kind == "interrupt"))
        {
            faults.Add("nothing leads to the cancel marker");
        }

        foreach (var route in Routes)
        {
            DiagramBox? source = route.Kind switch { "start" => Start, "cancel" => Cancel, _ => named.GetValueOrDefault(route.From) };
            DiagramBox? target = route.Kind == "interrupt" ? Cancel : named.GetValueOrDefault(route.To);
            if (source is not { } from || Distances.Distance(from, [route.Points[0], route.Points[0]]) > 0.5)
            {
                faults.Add($"the {route.Kind} edge {route.From} -> {route.To} does not start on its source ({route.Points[0]})");
            }

            if (target is not { } to || Distances.Distance(to, [route.Points[^1], route.Points[^1]]) > 0.5)
            {
                faults.Add($"the {route.Kind} edge {route.From} -> {route.To} does not end on its target ({route.Points[^1]})");
            }
        }

        return faults;
    }
    public static SvgDiagram Parse(string svg) => new(XDocument.Parse(svg));

    public Step StepOf(string id) => Assert.Single(Steps, s => s.Id == id);

    /// <summary>Every problem that makes the diagram hard to read; empty when there is none.</summary>
    public IReadOnlyList<string> ReadabilityFaults(CompiledDefinition definition)
    {
        var faults = new List<string>();
        foreach (var id in definition.Steps.Keys)
        {
            var steps = Steps.Where(s => s.Id == id).ToList();
            if (steps.Count != 1)
            {
                faults.Add($"step {id} is drawn {steps.Count} times");
            }
            else if (!steps[0].Texts.Contains(id))
            {
                faults.Add($"step {id} has no label with its id (texts: {string.Join(" | ", steps[0].Texts)})");
            }
        }

        var boxes = Steps.Select(s => (Name: $"step {s.Id}", s.Box)).Append((Name: "start", Box: Start))
            .Concat(Joins.Select(j => (Name: $"join of {j.Key}", Box: j.Value)))
            .Concat(Cancel is { } cancel ? [(Name: "cancel marker", Box: cancel)] : [])
            .ToList();
        foreach (var parallel in definition.Steps.Values.OfType<ParallelStep>().Where(s => s.ParallelBranches.Count > 0))
        {
            if (!Joins.ContainsKey(parallel.Id))
            {
                faults.Add($"parallel step {parallel.Id} has no join bar");
            }
        }

        if ((definition.OnCancel is null) != (Cancel is null))
        {
            faults.Add(definition.OnCancel is null ? "a cancel marker without a cancel path" : "the cancel path has no cancel marker");
        }
        for (var i = 0; i < boxes.Count; i++)
        {
            for (var j = i + 1; j < boxes.Count; j++)
            {
                if (boxes[i].Box.Overlaps(boxes[j].Box))
                {
                    faults.Add($"{boxes[i].Name} {boxes[i].Box} overlaps {boxes[j].Name} {boxes[j].Box}");
                }
            }
        }

        for (var i = 0; i < Labels.Count; i++)
        {
            var label = Labels[i];
            faults.AddRange(boxes.Where(b => b.Box.Overlaps(label.Box))
                .Select(b => $"label '{label.Text}' ({label.From} -> {label.To}) overlaps {b.Name}"));
            faults.AddRange(Labels.Skip(i + 1).Where(other => other.Box.Overlaps(label.Box))
                .Select(other => $"label '{label.Text}' ({label.From} -> {label.To}) overlaps label '{other.Text}' ({other.From} -> {other.To})"));
        }

        foreach (var (name, box) in boxes.Concat(Labels.Select(l => (Name: $"label '{l.Text}'", l.Box))))
        {
            if (box.X < 0 || box.Y < 0 || box.Right > Width || box.Bottom > Height)
            {
                faults.Add($"{name} {box} is outside the drawing ({Width} x {Height})");
            }
        }

        // Every transition that carries a label has it drawn: timeouts, branches, otherwise, error paths, parallel branches,
        // and a forEach's "each item" into its body.
        var expected = definition.Steps.Values.Sum(s =>
            (s is WaitForSignalStep { Timeout: not null } ? 1 : 0)
            + (s is DecisionStep decision ? decision.Branches.Count + (decision.Otherwise is null ? 0 : 1) : 0)
            + (s is IErrorHandlingStep { OnError: not null } ? 1 : 0)
            + (s is ParallelStep parallel ? parallel.ParallelBranches.Count : 0)
            + (s is ForEachStep ? 1 : 0));
        if (Labels.Count != expected)
        {
            faults.Add($"{Labels.Count} edge labels drawn, {expected} expected");
        }

        return faults;
    }

    /// <summary>Compiles a definition the way the service does, without a service.</summary>
    public static CompiledDefinition Compile(string json, int version = 1)
    {
        var diagnostics = new List<Diagnostic>();
        var compiler = new DefinitionCompiler(new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System));
        var document = DefinitionCompiler.Parse(json, diagnostics);
        var compiled = document is null ? null : compiler.Compile(document, version, diagnostics);
        Assert.True(compiled is not null, string.Join(Environment.NewLine, diagnostics.Select(d => $"{d.Path}: {d.Message}")));
        return compiled;
    }
}
