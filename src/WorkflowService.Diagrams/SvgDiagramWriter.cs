using System.Globalization;
using System.Text;
using System.Xml;
using WorkflowService.Engine.Definitions;

namespace WorkflowService.Diagrams;

/// <summary>
/// Writes a laid-out diagram as SVG with an XmlWriter (which escapes every text and attribute). Each step is a
/// <c>g</c> with <c>data-step</c>, <c>data-kind</c>, <c>data-box</c> (x,y,width,height in the SVG's coordinates) and,
/// on an instance diagram, <c>data-state</c>; each edge label is a <c>g</c> with <c>data-label</c>, <c>data-from</c>,
/// <c>data-to</c> and <c>data-box</c>, so that tools and tests can read the geometry back.
/// </summary>
internal static class SvgDiagramWriter
{
    private const string SvgNamespace = "http://www.w3.org/2000/svg";
    private const double Margin = 16;
    private const double HeaderFontSize = 14;
    private const double LineHeight = 20;
    private const double LegendSwatch = 14;
    private const string CancelStroke = "#8a3b3b";
    /// <summary>The colour of an edge an instance took: the completed steps' stroke.</summary>
    private const string TakenStroke = "#2e7d32";
    private const string TakenName = "taken";
    private const double TakenSwatch = 26;

    private sealed record Palette(string Fill, string Stroke, string Text, double StrokeWidth);

    private static readonly Dictionary<StepKind, Palette> KindPalettes = new()
    {
        [StepKind.Assign] = new("#eef3fb", "#5b7db1", "#1d2b40", 1.4),
        [StepKind.Decision] = new("#f3ecfb", "#8a63b8", "#2e1f40", 1.4),
        [StepKind.WaitForSignal] = new("#fdf5e2", "#b58a2a", "#3d2f0e", 1.4),
        [StepKind.Delay] = new("#fdf5e2", "#b58a2a", "#3d2f0e", 1.4),
        [StepKind.HumanTask] = new("#e8f6f5", "#3c8f8a", "#123331", 1.4),
        [StepKind.Http] = new("#eef3fb", "#3b6ea8", "#10233d", 1.4),
        [StepKind.Emit] = new("#eef3fb", "#3b6ea8", "#10233d", 1.4),
        [StepKind.SubWorkflow] = new("#f3f3f3", "#6b6b6b", "#1f1f1f", 1.4),
        [StepKind.Parallel] = new("#e9f1fa", "#2f5f8f", "#10253d", 1.6),
        [StepKind.ForEach] = new("#e9f1fa", "#2f5f8f", "#10253d", 1.6),
        [StepKind.Complete] = new("#eef7ee", "#4a8a4a", "#173317", 2.2),
        [StepKind.Fail] = new("#fbeeee", "#b05454", "#401818", 2.2),
    };

    private static readonly Dictionary<StepState, Palette> StatePalettes = new()
    {
        [StepState.NotReached] = new("#ffffff", "#a8a8a8", "#6b6b6b", 1.2),
        [StepState.Completed] = new("#d6efda", "#2e7d32", "#0f2e12", 2),
        [StepState.Current] = new("#ffe8a3", "#d48800", "#3d2a00", 3.2),
        [StepState.Failed] = new("#f8d0ce", "#c62828", "#4a0c0c", 3.2),
    };

    private static readonly (StepState State, string Name)[] Legend =
    [
        (StepState.Completed, "completed"),
        (StepState.Current, "current"),
        (StepState.Failed, "failed"),
        (StepState.NotReached, "not reached"),
    ];

    public static string StateName(StepState state) => state switch
    {
        StepState.Completed => "completed",
        StepState.Current => "current",
        StepState.Failed => "failed",
        _ => "not-reached",
    };

    public static string Write(DiagramLayout layout, InstanceOverlay? overlay)
    {
        var definition = layout.Graph.Definition;
        var header = new List<string> { $"{definition.Name} v{definition.Version}" };
        if (overlay is not null)
        {
            header.Add($"instance {overlay.Instance.Id} · {overlay.Instance.Status}");
        }

        var legendWidth = overlay is null ? 0 : Legend.Sum(l => LegendSwatch + 6 + TextMetrics.Width(l.Name, LabelFontSize) + 18)
            + TakenSwatch + 6 + TextMetrics.Width(TakenName, LabelFontSize);
        var headerHeight = (header.Count * LineHeight) + (overlay is null ? 0 : LineHeight + 4) + 10;
        var width = Math.Ceiling(Math.Max(layout.Bounds.Width, Math.Max(legendWidth, header.Max(h => TextMetrics.Width(h, HeaderFontSize))))
            + (2 * Margin));
        var height = Math.Ceiling(layout.Bounds.Height + headerHeight + (2 * Margin));
        var (ox, oy) = (Margin, Margin + headerHeight);

        var builder = new StringBuilder();
        var settings = new XmlWriterSettings { OmitXmlDeclaration = true, Indent = true, IndentChars = " ", NewLineChars = "\n" };
        using (var xml = XmlWriter.Create(builder, settings))
        {
            xml.WriteStartElement("svg", SvgNamespace);
            Attr(xml, "width", width);
            Attr(xml, "height", height);
            xml.WriteAttributeString("viewBox", $"0 0 {Number.Format(width)} {Number.Format(height)}");
            xml.WriteAttributeString("font-family", TextMetrics.FontFamily);
            xml.WriteAttributeString("data-definition", definition.Name);
            xml.WriteAttributeString("data-version", definition.Version.ToString(CultureInfo.InvariantCulture));
            if (overlay is not null)
            {
                xml.WriteAttributeString("data-instance", overlay.Instance.Id.ToString());
                xml.WriteAttributeString("data-status", overlay.Instance.Status.ToString());
            }

            xml.WriteElementString("title", SvgNamespace, Clean(string.Join(" — ", header)));
            WriteDefs(xml);

            xml.WriteStartElement("rect");
            xml.WriteAttributeString("width", "100%");
            xml.WriteAttributeString("height", "100%");
            xml.WriteAttributeString("fill", "#ffffff");
            xml.WriteEndElement();

            WriteHeader(xml, header, overlay);

            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "edges");
            foreach (var edge in layout.Edges)
            {
                WriteEdge(xml, edge, overlay?.Took(edge.Edge) == true, ox, oy);
            }

            xml.WriteEndElement();

            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "steps");
            foreach (var node in layout.Nodes)
            {
                WriteNode(xml, node, overlay, definition, ox, oy);
            }

            xml.WriteEndElement();

            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "edge-labels");
            foreach (var edge in layout.Edges.Where(e => e.LabelBox is not null))
            {
                WriteLabel(xml, edge, ox, oy);
            }

            xml.WriteEndElement();
            xml.WriteEndElement();
        }

        return builder.Append('\n').ToString();
    }

    private static double LabelFontSize => DiagramLayout.LabelFontSize;

    private static void WriteDefs(XmlWriter xml)
    {
        xml.WriteStartElement("defs");
        Arrow(xml, "arrow", "#555555", 10);
        Arrow(xml, "arrow-cancel", CancelStroke, 8);
        Arrow(xml, "arrow-taken", TakenStroke, 12);
        xml.WriteEndElement();
    }

    private static void Arrow(XmlWriter xml, string id, string fill, double size)
    {
        xml.WriteStartElement("marker");
        xml.WriteAttributeString("id", id);
        xml.WriteAttributeString("viewBox", "0 0 10 10");
        xml.WriteAttributeString("refX", "10");
        xml.WriteAttributeString("refY", "5");
        xml.WriteAttributeString("markerUnits", "userSpaceOnUse");
        Attr(xml, "markerWidth", size);
        Attr(xml, "markerHeight", size);
        xml.WriteAttributeString("orient", "auto");
        xml.WriteStartElement("path");
        xml.WriteAttributeString("d", "M0,1 L10,5 L0,9 z");
        xml.WriteAttributeString("fill", fill);
        xml.WriteEndElement();
        xml.WriteEndElement();
    }

    private static void WriteHeader(XmlWriter xml, List<string> header, InstanceOverlay? overlay)
    {
        xml.WriteStartElement("g");
        xml.WriteAttributeString("class", "header");
        for (var i = 0; i < header.Count; i++)
        {
            Text(xml, header[i], Margin, Margin + (i * LineHeight) + HeaderFontSize, HeaderFontSize, i == 0 ? "#222222" : "#444444",
                anchor: "start", bold: i == 0);
        }

        if (overlay is not null)
        {
            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "legend");
            var x = Margin;
            var y = Margin + (header.Count * LineHeight) + 4;
            foreach (var (state, name) in Legend)
            {
                var palette = StatePalettes[state];
                xml.WriteStartElement("rect");
                xml.WriteAttributeString("data-legend", StateName(state));
                Attr(xml, "x", x);
                Attr(xml, "y", y);
                Attr(xml, "width", LegendSwatch);
                Attr(xml, "height", LegendSwatch);
                xml.WriteAttributeString("rx", "3");
                xml.WriteAttributeString("fill", palette.Fill);
                xml.WriteAttributeString("stroke", palette.Stroke);
                Attr(xml, "stroke-width", Math.Min(palette.StrokeWidth, 2.5));
                xml.WriteEndElement();
                Text(xml, name, x + LegendSwatch + 6, y + LegendSwatch - 3, LabelFontSize, "#333333", anchor: "start");
                x += LegendSwatch + 6 + TextMetrics.Width(name, LabelFontSize) + 18;
            }

            // A taken edge: an arrow in the taken edges' style.
            xml.WriteStartElement("path");
            xml.WriteAttributeString("data-legend", TakenName);
            xml.WriteAttributeString("d", $"M{Number.Format(x)},{Number.Format(y + (LegendSwatch / 2))} L{Number.Format(x + TakenSwatch)},{Number.Format(y + (LegendSwatch / 2))}");
            xml.WriteAttributeString("fill", "none");
            xml.WriteAttributeString("stroke", TakenStroke);
            xml.WriteAttributeString("stroke-width", "2.8");
            xml.WriteAttributeString("marker-end", "url(#arrow-taken)");
            xml.WriteEndElement();
            Text(xml, TakenName, x + TakenSwatch + 6, y + LegendSwatch - 3, LabelFontSize, "#333333", anchor: "start");

            xml.WriteEndElement();
        }

        xml.WriteEndElement();
    }

    private static void WriteEdge(XmlWriter xml, PlacedEdge placed, bool taken, double ox, double oy)
    {
        var edge = placed.Edge;
        xml.WriteStartElement("g");
        xml.WriteAttributeString("class", taken ? "edge taken" : "edge");
        xml.WriteAttributeString("data-edge", edge.Index.ToString(CultureInfo.InvariantCulture));
        xml.WriteAttributeString("data-kind", edge.Kind.ToString().ToLowerInvariant());
        xml.WriteAttributeString("data-from", edge.Source.EndName);
        xml.WriteAttributeString("data-to", edge.Target.EndName);
        if (edge.FullLabel is not null)
        {
            xml.WriteElementString("title", SvgNamespace, Clean(edge.FullLabel));
        }
        else if (edge.Kind == DiagramEdgeKind.Cancel)
        {
            xml.WriteElementString("title", SvgNamespace, "a cancel continues here (onCancel)");
        }
        else if (edge.Kind == DiagramEdgeKind.Interrupt)
        {
            xml.WriteElementString("title", SvgNamespace, Clean($"a cancel while waiting at {edge.Source.StepId} runs the cancel path"));
        }

        xml.WriteStartElement("path");
        var path = new StringBuilder();
        for (var i = 0; i < placed.Points.Count; i++)
        {
            var p = placed.Points[i];
            path.Append(i == 0 ? 'M' : 'L').Append(Number.Format(p.X + ox)).Append(',').Append(Number.Format(p.Y + oy)).Append(' ');
        }

        xml.WriteAttributeString("d", path.ToString().TrimEnd());
        xml.WriteAttributeString("fill", "none");
        // The ways into the cancel path are thin and light: they hold for every wait, and stay behind the flow.
        var interrupt = edge.Kind == DiagramEdgeKind.Interrupt;
        xml.WriteAttributeString("stroke", taken ? TakenStroke : interrupt ? CancelStroke : "#555555");
        xml.WriteAttributeString("stroke-width", taken ? "2.8" : interrupt ? "1" : "1.4");
        xml.WriteAttributeString("stroke-linejoin", "round");
        if (interrupt && !taken)
        {
            xml.WriteAttributeString("stroke-opacity", "0.55");
            xml.WriteAttributeString("stroke-dasharray", "2 3");
        }
        else if (edge.Kind is DiagramEdgeKind.Timeout or DiagramEdgeKind.Error or DiagramEdgeKind.Cancel)
        {
            xml.WriteAttributeString("stroke-dasharray", "6 4");
        }

        xml.WriteAttributeString("marker-end", taken ? "url(#arrow-taken)" : interrupt ? "url(#arrow-cancel)" : "url(#arrow)");
        xml.WriteEndElement();
        xml.WriteEndElement();
    }

    private static void WriteNode(XmlWriter xml, PlacedNode placed, InstanceOverlay? overlay, CompiledDefinition definition, double ox, double oy)
    {
        var node = placed.Node;
        var box = placed.Box.Offset(ox, oy);
        if (node.IsStart)
        {
            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "start");
            xml.WriteAttributeString("data-box", box.Format());
            xml.WriteElementString("title", SvgNamespace, "start");
            xml.WriteStartElement("circle");
            Attr(xml, "cx", box.Center.X);
            Attr(xml, "cy", box.Center.Y);
            Attr(xml, "r", (box.Width / 2) - 1);
            xml.WriteAttributeString("fill", "#333333");
            xml.WriteEndElement();
            xml.WriteEndElement();
            return;
        }

        if (node.Role == DiagramNodeRole.Join)
        {
            // A bar, as in UML activity diagrams: the branches of the parallel step meet here.
            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "join");
            xml.WriteAttributeString("data-join", node.StepId);
            xml.WriteAttributeString("data-box", box.Format());
            xml.WriteElementString("title", SvgNamespace, Clean($"join of {node.StepId}: continues when every branch has finished"));
            StartRect(xml, box);
            xml.WriteAttributeString("rx", "2");
            xml.WriteAttributeString("fill", "#2f5f8f");
            xml.WriteEndElement();
            xml.WriteEndElement();
            return;
        }

        if (node.Role == DiagramNodeRole.Cancel)
        {
            xml.WriteStartElement("g");
            xml.WriteAttributeString("class", "cancel");
            xml.WriteAttributeString("data-box", box.Format());
            xml.WriteElementString("title", SvgNamespace, "cancel: where POST /instances/{id}/cancel continues (onCancel)");
            StartRect(xml, box);
            Attr(xml, "rx", box.Height / 2);
            xml.WriteAttributeString("fill", "#ffffff");
            xml.WriteAttributeString("stroke", CancelStroke);
            xml.WriteAttributeString("stroke-width", "1.4");
            xml.WriteAttributeString("stroke-dasharray", "4 3");
            xml.WriteEndElement();
            Text(xml, node.Title, box.Center.X, box.Y + box.Height - 6, LabelFontSize, "#8a3b3b", cssClass: "marker");
            xml.WriteEndElement();
            return;
        }

        var kind = node.Kind!.Value;
        var state = overlay?.StateOf(node.StepId!);
        var palette = state is { } s ? StatePalettes[s] : KindPalettes[kind];
        xml.WriteStartElement("g");
        xml.WriteAttributeString("class", "step");
        xml.WriteAttributeString("data-step", node.StepId);
        xml.WriteAttributeString("data-kind", DiagramGraph.KindName(kind));
        xml.WriteAttributeString("data-box", box.Format());
        if (state is { } st)
        {
            xml.WriteAttributeString("data-state", StateName(st));
        }

        if (definition.Steps.GetValueOrDefault(node.StepId!) is { Within: { } scope })
        {
            xml.WriteAttributeString("data-branch", scope.Branch);
        }

        xml.WriteElementString("title", SvgNamespace,
            Clean($"{node.StepId} ({node.Subtitle})" + (state is { } t ? $": {StateName(t).Replace('-', ' ')}" : "")));
        WriteShape(xml, kind, box, palette);
        var center = box.Center;
        Text(xml, node.Title, center.X, center.Y - 3, DiagramLayout.TitleFontSize, palette.Text, bold: true, cssClass: "step-id");
        Text(xml, node.Subtitle, center.X, center.Y + 13, DiagramLayout.SubtitleFontSize, palette.Text, cssClass: "step-type", opacity: 0.8);
        xml.WriteEndElement();
    }

    private static void WriteShape(XmlWriter xml, StepKind kind, DiagramBox box, Palette palette)
    {
        void Style()
        {
            xml.WriteAttributeString("fill", palette.Fill);
            xml.WriteAttributeString("stroke", palette.Stroke);
            Attr(xml, "stroke-width", palette.StrokeWidth);
        }

        void Rect(DiagramBox b, double radius, string? dash = null)
        {
            StartRect(xml, b);
            Attr(xml, "rx", radius);
            Style();
            if (dash is not null)
            {
                xml.WriteAttributeString("stroke-dasharray", dash);
            }

            xml.WriteEndElement();
        }

        switch (kind)
        {
            case StepKind.Decision:
                var inset = box.Height * 0.3;
                var cy = box.Center.Y;
                xml.WriteStartElement("polygon");
                xml.WriteAttributeString("points", string.Join(' ',
                    new DiagramPoint[]
                    {
                        new(box.X, cy), new(box.X + inset, box.Y), new(box.Right - inset, box.Y),
                        new(box.Right, cy), new(box.Right - inset, box.Bottom), new(box.X + inset, box.Bottom),
                    }.Select(p => $"{Number.Format(p.X)},{Number.Format(p.Y)}")));
                Style();
                xml.WriteEndElement();
                break;
            case StepKind.Complete or StepKind.Fail:
                Rect(box, box.Height / 2);
                break;
            case StepKind.WaitForSignal:
                Rect(box, 10);
                break;
            case StepKind.Parallel or StepKind.ForEach:
                if (kind == StepKind.ForEach)
                {
                    // A stack of boxes: the body runs once per item.
                    Rect(new DiagramBox(box.X + 6, box.Y - 6, box.Width, box.Height), 3);
                    Rect(new DiagramBox(box.X + 3, box.Y - 3, box.Width, box.Height), 3);
                }

                Rect(box, 3);
                // The fork bar along the bottom: the branches leave from it.
                xml.WriteStartElement("rect");
                Attr(xml, "x", box.X + 6);
                Attr(xml, "y", box.Bottom - 7);
                Attr(xml, "width", box.Width - 12);
                Attr(xml, "height", 4);
                xml.WriteAttributeString("rx", "1.5");
                xml.WriteAttributeString("fill", palette.Stroke);
                xml.WriteEndElement();
                break;
            case StepKind.Delay:
                Rect(box, 10, "5 3");
                break;
            case StepKind.HumanTask:
                Rect(box, 10);
                // A second, inner border: a person's work.
                StartRect(xml, box.Inflate(-3.5));
                xml.WriteAttributeString("rx", "7");
                xml.WriteAttributeString("fill", "none");
                xml.WriteAttributeString("stroke", palette.Stroke);
                xml.WriteAttributeString("stroke-width", "0.8");
                xml.WriteEndElement();
                break;
            default:
                Rect(box, 3);
                break;
        }
    }

    private static void WriteLabel(XmlWriter xml, PlacedEdge placed, double ox, double oy)
    {
        var edge = placed.Edge;
        var box = placed.LabelBox!.Value.Offset(ox, oy);
        xml.WriteStartElement("g");
        xml.WriteAttributeString("class", "edge-label");
        xml.WriteAttributeString("data-edge", edge.Index.ToString(CultureInfo.InvariantCulture));
        xml.WriteAttributeString("data-label", Clean(edge.Label!));
        xml.WriteAttributeString("data-kind", edge.Kind.ToString().ToLowerInvariant());
        xml.WriteAttributeString("data-from", edge.Source.EndName);
        xml.WriteAttributeString("data-to", edge.Target.EndName);
        xml.WriteAttributeString("data-box", box.Format());
        if (edge.FullLabel is not null)
        {
            xml.WriteElementString("title", SvgNamespace, Clean(edge.FullLabel));
        }

        StartRect(xml, box);
        xml.WriteAttributeString("rx", "3");
        // Opaque: the edge is drawn through its own label, which hides the line under the text.
        xml.WriteAttributeString("fill", "#ffffff");
        xml.WriteAttributeString("stroke", "#d0d0d0");
        xml.WriteAttributeString("stroke-width", "0.6");
        xml.WriteEndElement();
        var color = edge.Kind switch
        {
            DiagramEdgeKind.Timeout => "#9a5a00",
            DiagramEdgeKind.Branch => "#4b2a7a",
            DiagramEdgeKind.Error => "#b03030",
            DiagramEdgeKind.Fork => "#1f4f7f",
            _ => "#444444",
        };
        Text(xml, edge.Label!, box.Center.X, box.Y + box.Height - 4.5, DiagramLayout.LabelFontSize, color);
        xml.WriteEndElement();
    }

    private static void Text(XmlWriter xml, string text, double x, double y, double size, string fill,
        string anchor = "middle", bool bold = false, string? cssClass = null, double opacity = 1)
    {
        xml.WriteStartElement("text");
        if (cssClass is not null)
        {
            xml.WriteAttributeString("class", cssClass);
        }

        Attr(xml, "x", x);
        Attr(xml, "y", y);
        Attr(xml, "font-size", size);
        xml.WriteAttributeString("text-anchor", anchor);
        xml.WriteAttributeString("fill", fill);
        if (bold)
        {
            xml.WriteAttributeString("font-weight", "bold");
        }

        if (opacity < 1)
        {
            Attr(xml, "fill-opacity", opacity);
        }

        xml.WriteString(Clean(text));
        xml.WriteEndElement();
    }

    private static void Attr(XmlWriter xml, string name, double value) => xml.WriteAttributeString(name, Number.Format(value));

    /// <summary>Opens a rect element covering <paramref name="box"/>; the caller adds its style and closes it.</summary>
    private static void StartRect(XmlWriter xml, DiagramBox box)
    {
        xml.WriteStartElement("rect");
        Attr(xml, "x", box.X);
        Attr(xml, "y", box.Y);
        Attr(xml, "width", box.Width);
        Attr(xml, "height", box.Height);
    }

    /// <summary>Replaces what XML 1.0 cannot hold (control characters, lone surrogates) with U+FFFD; XmlWriter escapes the rest.</summary>
    internal static string Clean(string text)
    {
        var builder = new StringBuilder(text.Length);
        for (var i = 0; i < text.Length; i++)
        {
            var c = text[i];
            if (char.IsHighSurrogate(c) && i + 1 < text.Length && char.IsLowSurrogate(text[i + 1]))
            {
                builder.Append(c).Append(text[++i]);
            }
            else
            {
                builder.Append(XmlConvert.IsXmlChar(c) ? c : '\uFFFD');
            }
        }

        return builder.ToString();
    }
}
