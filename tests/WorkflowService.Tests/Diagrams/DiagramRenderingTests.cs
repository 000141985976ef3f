using WorkflowService.Diagrams;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Tests.Diagrams;

/// <summary>The renderer alone: every diagram is well-formed SVG in which every step is labelled and nothing overlaps.</summary>
public sealed class DiagramRenderingTests
{
    public static TheoryData<string> Examples() =>
        new(Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "examples"), "*.json").Select(Path.GetFileName).Order()!);

    [Theory]
    [MemberData(nameof(Examples))]
    public void Every_example_is_readable(string file)
    {
        var definition = SvgDiagram.Compile(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "examples", file)));

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        Assert.Empty(diagram.ReadabilityFaults(definition));
    }

    /// <summary>Every example, the large definition in three sizes, and parallel edges with labels and a labelled self-loop.</summary>
    public static TheoryData<string> Definitions()
    {
        var data = new TheoryData<string>();
        foreach (var example in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "examples"), "*.json").Select(Path.GetFileName).Order())
        {
            data.Add(example!);
        }

        data.Add("large-25");
        data.Add("large-40");
        data.Add("large-100");
        data.Add("loops");
        return data;
    }

    private static CompiledDefinition DefinitionNamed(string name) => name switch
    {
        _ when name.StartsWith("large-", StringComparison.Ordinal) =>
            SvgDiagram.Compile(LargeDefinition.Json(name, int.Parse(name["large-".Length..], System.Globalization.CultureInfo.InvariantCulture))),
        "loops" => SvgDiagram.Compile(Loops),
        _ => SvgDiagram.Compile(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "examples", name))),
    };

    [Theory]
    [MemberData(nameof(Definitions))]
    public void Every_label_sits_on_its_own_edge_nearer_it_than_any_other_and_clear_of_boxes_and_labels(string name)
    {
        var definition = DefinitionNamed(name);

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        var faults = diagram.LabelOwnershipFaults();
        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
        // Labels overlap no box and no other label, and every labelled transition has its label.
        Assert.Empty(diagram.ReadabilityFaults(definition));
    }

    [Theory]
    [MemberData(nameof(Definitions))]
    public void Every_box_but_the_start_has_an_edge_into_it_and_every_edge_reaches_both_its_ends(string name)
    {
        var definition = DefinitionNamed(name);

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        var faults = diagram.ConnectionFaults(definition);
        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
    }

    [Fact]
    public void The_cancel_path_is_entered_from_every_step_that_waits()
    {
        var definition = DefinitionNamed("insurance-claim.json");

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        Assert.NotNull(diagram.Cancel);
        Assert.Contains(diagram.Edges, e => e is { Kind: "cancel", To: "withdrawn" });
        Assert.Equal(
            ["claims-review", "desk-assessment", "wait-assessor-report", "wait-police-report"],
            diagram.Edges.Where(e => e.Kind == "interrupt").Select(e => e.From).Order(StringComparer.Ordinal));
        Assert.DoesNotContain(SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(DefinitionNamed("insurance-quotation.json"))).Edges,
            e => e.Kind is "interrupt" or "cancel");
    }

    [Theory]
    [InlineData(40)]
    [InlineData(25)]
    [InlineData(100)]
    public void A_large_definition_with_decisions_timeouts_and_loops_is_readable(int steps)
    {
        var definition = SvgDiagram.Compile(LargeDefinition.Json($"large-{steps}", steps));
        Assert.Equal(steps, definition.Steps.Count);
        Assert.Contains(definition.Steps.Values, s => s is WaitForSignalStep { Timeout: not null });
        Assert.Contains(definition.Steps.Values, s => s is DecisionStep { Branches.Count: >= 2 });

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        Assert.Empty(diagram.ReadabilityFaults(definition));
        Assert.Equal(steps, diagram.Steps.Count);
        Assert.Equal("waitForSignal", diagram.StepOf("wait-1").Kind);
        Assert.Contains(diagram.StepOf("wait-1").Texts, t => t.Contains("timeout 1h", StringComparison.Ordinal));
        Assert.Contains(diagram.Labels, l => l is { From: "wait-1", To: "remind-1", Text: "timeout", Kind: "timeout" });
        Assert.Contains(diagram.Labels, l => l is { From: "check-2", To: "wait-2", Text: "otherwise", Kind: "otherwise" });
        Assert.Contains(diagram.Labels, l => l.From == "check-2" && l.To == "rejected" && l.Text == "2: vars.round >= 4");
    }

    [Fact]
    public void Rendering_is_deterministic()
    {
        var json = LargeDefinition.Json("large-40");

        var first = new DiagramRenderer().RenderDefinition(SvgDiagram.Compile(json));
        var second = new DiagramRenderer().RenderDefinition(SvgDiagram.Compile(json));

        Assert.Equal(first, second);
    }

    [Fact]
    public void Text_is_escaped_and_long_conditions_are_shortened_with_the_whole_text_kept_as_a_tooltip()
    {
        const string condition = "vars.a < 1 && vars.b !== \"<b>&amp;</b>\" && vars.c > 'some long text that does not fit'";
        var definition = SvgDiagram.Compile($$"""
            {
              "name": "escaping",
              "steps": [
                { "id": "a-b", "type": "decision", "branches": [ { "when": {{System.Text.Json.JsonSerializer.Serialize(condition)}}, "next": "done" } ], "otherwise": "done" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var svg = new DiagramRenderer().RenderDefinition(definition);
        var diagram = SvgDiagram.Parse(svg);

        Assert.DoesNotContain("<b>", svg, StringComparison.Ordinal);
        var label = Assert.Single(diagram.Labels, l => l.Kind == "branch");
        Assert.EndsWith("…", label.Text, StringComparison.Ordinal);
        Assert.True(label.Text.Length <= 44);
        Assert.StartsWith("vars.a < 1 && vars.b !== \"<b>", label.Text, StringComparison.Ordinal);
        var tooltip = diagram.Document.Descendants(SvgDiagram.Svg + "g")
            .Single(g => (string?)g.Attribute("data-label") == label.Text).Element(SvgDiagram.Svg + "title")!.Value;
        Assert.Equal(condition, tooltip);
        Assert.Empty(diagram.ReadabilityFaults(definition));
    }

    private const string Loops = """
        {
          "name": "loops",
          "steps": [
            { "id": "wait", "type": "waitForSignal", "signal": "go", "timeout": "PT1M", "onTimeout": "wait", "output": "go" },
            { "id": "route", "type": "decision",
              "branches": [ { "when": "vars.go === 1", "next": "done" }, { "when": "vars.go === 2", "next": "done" } ],
              "otherwise": "done" },
            { "id": "done", "type": "complete" }
          ]
        }
        """;

    [Fact]
    public void Self_loops_and_parallel_edges_get_their_own_labels()
    {
        var definition = SvgDiagram.Compile(Loops);

        var diagram = SvgDiagram.Parse(new DiagramRenderer().RenderDefinition(definition));

        Assert.Empty(diagram.ReadabilityFaults(definition));
        Assert.Contains(diagram.Labels, l => l is { From: "wait", To: "wait", Text: "timeout" });
        Assert.Equal(3, diagram.Labels.Count(l => l is { From: "route", To: "done" }));
        var routes = diagram.Document.Descendants(SvgDiagram.Svg + "g")
            .Where(g => (string?)g.Attribute("data-from") == "route" && (string?)g.Attribute("class") == "edge")
            .Select(g => (string)g.Element(SvgDiagram.Svg + "path")!.Attribute("d")!).ToList();
        Assert.Equal(3, routes.Distinct().Count());
    }

    [Fact]
    public void The_instance_overlay_marks_completed_current_and_failed_steps()
    {
        var definition = SvgDiagram.Compile(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "examples", "insurance-quote-or-cancel.json")));
        var instance = new WorkflowInstance
        {
            Id = Guid.NewGuid(),
            DefinitionName = definition.Name,
            DefinitionVersion = 1,
            Status = InstanceStatus.Waiting,
            WaitStepId = "customer-decision",
        };
        HistoryEvent Event(int sequence, string type, string? step) => new() { Sequence = sequence, Type = type, StepId = step };
        var history = new[]
        {
            Event(-1, HistoryEventTypes.InstanceStarted, null),
            Event(0, HistoryEventTypes.StepCompleted, "quote"),
            Event(1, HistoryEventTypes.WaitStarted, "customer-decision"),
            Event(2, HistoryEventTypes.SignalReceived, "customer-decision"),
            new HistoryEvent { Sequence = 3, Type = HistoryEventTypes.BranchTaken, StepId = "route", DataJson = """{"next":"customer-decision"}""" },
            Event(4, HistoryEventTypes.WaitStarted, "customer-decision"),
        };

        var waiting = SvgDiagram.Parse(new DiagramRenderer().RenderInstance(definition, instance, history));

        Assert.Equal("completed", waiting.StepOf("quote").State);
        Assert.Equal("current", waiting.StepOf("customer-decision").State);
        Assert.Equal("completed", waiting.StepOf("route").State);
        Assert.Equal("not-reached", waiting.StepOf("converted").State);
        Assert.Equal(4, waiting.Document.Descendants(SvgDiagram.Svg + "rect").Count(r => r.Attribute("data-legend") is not null));
        Assert.Empty(waiting.ReadabilityFaults(definition));
        // The edges taken: from the start to the signal, the signal on to the decision, and its otherwise back.
        Assert.Equal(
            [">quote (start)", "customer-decision>route (next)", "quote>customer-decision (next)", "route>customer-decision (otherwise)"],
            waiting.Routes.Where(r => r.Classes.Contains("taken")).Select(r => $"{r.From}>{r.To} ({r.Kind})").Order(StringComparer.Ordinal));

        instance.Status = InstanceStatus.Faulted;
        instance.Error = "step 'route': TypeError: boom";
        var faulted = SvgDiagram.Parse(new DiagramRenderer().RenderInstance(definition, instance, history));

        Assert.Equal("failed", faulted.StepOf("route").State);
        Assert.Equal("current", faulted.StepOf("customer-decision").State);

        instance.Error = "something without a step";
        var faultedAtWait = SvgDiagram.Parse(new DiagramRenderer().RenderInstance(
            definition, instance, history.Append(Event(5, HistoryEventTypes.InstanceFaulted, "customer-decision"))));

        Assert.Equal("failed", faultedAtWait.StepOf("customer-decision").State);
        Assert.Equal("completed", faultedAtWait.StepOf("route").State);
    }
}
