using System.Xml.Linq;
using Microsoft.Extensions.Options;
using WorkflowService.Diagrams;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Tests.Diagrams;

/// <summary>
/// A rendered diagram read back as XML: the boxes of its steps and edge labels come from the data-box attributes the
/// renderer writes beside what it draws, so the checks measure what a viewer sees.
/// </summary>
public sealed class SvgDiagram
{
    public static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    public sealed record Step(string Id, string Kind, string? State, DiagramBox Box, IReadOnlyList<string> Texts);

    public sealed record Label(string Text, string Kind, string From, string To, DiagramBox Box);

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
            DiagramBox.Parse((string)g.Attribute("data-box")!))).ToList();
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
    public IEnumerable<(string Kind, string From, string To)> Edges =>
        Document.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "edge")
            .Select(g => ((string)g.Attribute("data-kind")!, (string)g.Attribute("data-from")!, (string)g.Attribute("data-to")!));
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

        // Every transition that carries a label has it drawn: timeouts, branches, otherwise, error paths, parallel branches.
        var expected = definition.Steps.Values.Sum(s =>
            (s is WaitForSignalStep { Timeout: not null } ? 1 : 0)
            + (s is DecisionStep decision ? decision.Branches.Count + (decision.Otherwise is null ? 0 : 1) : 0)
            + (s is IErrorHandlingStep { OnError: not null } ? 1 : 0)
            + (s is ParallelStep parallel ? parallel.ParallelBranches.Count : 0));
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
