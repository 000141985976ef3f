using System.Globalization;

namespace WorkflowService.Diagrams;

/// <summary>A point of the drawing, in user units (pixels), y growing downwards.</summary>
public readonly record struct DiagramPoint(double X, double Y)
{
    public DiagramPoint Offset(double dx, double dy) => new(X + dx, Y + dy);

    public static double Distance(DiagramPoint a, DiagramPoint b) => Math.Sqrt(((a.X - b.X) * (a.X - b.X)) + ((a.Y - b.Y) * (a.Y - b.Y)));
}

/// <summary>An axis-aligned rectangle: top-left corner, width and height.</summary>
public readonly record struct DiagramBox(double X, double Y, double Width, double Height)
{
    public double Right => X + Width;
    public double Bottom => Y + Height;
    public DiagramPoint Center => new(X + (Width / 2), Y + (Height / 2));

    public static DiagramBox Around(DiagramPoint center, double width, double height) =>
        new(center.X - (width / 2), center.Y - (height / 2), width, height);

    public DiagramBox Offset(double dx, double dy) => this with { X = X + dx, Y = Y + dy };

    public DiagramBox Inflate(double by) => new(X - by, Y - by, Width + (2 * by), Height + (2 * by));

    /// <summary>True when the two rectangles share area (touching edges do not count).</summary>
    public bool Overlaps(DiagramBox other) =>
        X < other.Right && other.X < Right && Y < other.Bottom && other.Y < Bottom;

    public DiagramBox Union(DiagramBox other)
    {
        var x = Math.Min(X, other.X);
        var y = Math.Min(Y, other.Y);
        return new DiagramBox(x, y, Math.Max(Right, other.Right) - x, Math.Max(Bottom, other.Bottom) - y);
    }

    /// <summary>"x,y,width,height" with invariant numbers, as written to the SVG's data-box attributes.</summary>
    public string Format() => string.Join(',', new[] { X, Y, Width, Height }.Select(Number.Format));

    public static DiagramBox Parse(string text)
    {
        var parts = text.Split(',').Select(p => double.Parse(p, NumberStyles.Float, CultureInfo.InvariantCulture)).ToArray();
        return parts.Length == 4
            ? new DiagramBox(parts[0], parts[1], parts[2], parts[3])
            : throw new FormatException($"'{text}' is not x,y,width,height");
    }
}

internal static class Number
{
    /// <summary>At most two decimals, invariant culture: short, stable SVG text.</summary>
    public static string Format(double value)
    {
        var rounded = Math.Round(value, 2);
        return (rounded == 0 ? 0 : rounded).ToString("0.##", CultureInfo.InvariantCulture);
    }
}
