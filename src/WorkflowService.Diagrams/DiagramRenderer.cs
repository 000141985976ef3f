using System.Runtime.CompilerServices;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Diagrams;

/// <summary>
/// Draws a definition as an SVG diagram (steps as boxes labelled with their id and type, transitions as arrows labelled
/// "timeout", "otherwise" or the branch condition), laid out top to bottom by a layered layout; an instance
/// diagram is the same drawing with the completed, current and failed steps coloured, the edges the instance took
/// highlighted, and a legend.
/// </summary>
public sealed class DiagramRenderer
{
    /// <summary>The media type of what this renders.</summary>
    public const string ContentType = "image/svg+xml";

    // A compiled definition never changes, so its layout is computed once (also when asked for twice at once) and lives
    // as long as the definition does. The layout is the costly part of a diagram: with GraphShape's it took 5 s for 100
    // steps and 24 s for 300 on a small machine; LayeredLayout bounds its sweeps, see docs/benchmarks/large-definition-2026-11-26.md.
    private readonly ConditionalWeakTable<CompiledDefinition, Lazy<DiagramLayout>> _layouts = new();

    public string RenderDefinition(CompiledDefinition definition) => SvgDiagramWriter.Write(LayoutOf(definition), null);

    public string RenderInstance(CompiledDefinition definition, WorkflowInstance instance, IEnumerable<HistoryEvent> history) =>
        SvgDiagramWriter.Write(LayoutOf(definition), InstanceOverlay.From(definition, instance, history));

    private DiagramLayout LayoutOf(CompiledDefinition definition) =>
        _layouts.GetValue(definition, d => new Lazy<DiagramLayout>(() => DiagramLayout.Compute(DiagramGraph.From(d)))).Value;
}
