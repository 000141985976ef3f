using System.Globalization;
using System.Text;

namespace WorkflowService.Diagrams;

/// <summary>
/// Text widths without a font engine: every label is drawn in a monospaced font, whose characters all advance by the
/// same fraction of the font size, so the server computes box sizes that hold in any browser.
/// </summary>
internal static class TextMetrics
{
    /// <summary>Monospaced fonts found on Linux, macOS and Windows; each advances 0.6 em per character (Consolas 0.55).</summary>
    public const string FontFamily = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', 'Courier New', monospace";

    /// <summary>0.6 em and a little margin for a substituted font.</summary>
    private const double AdvanceEm = 0.62;

    /// <summary>The width of one line of text at the font size, in user units (pixels).</summary>
    public static double Width(string text, double fontSize) => Columns(text) * AdvanceEm * fontSize;

    /// <summary>Character cells: East Asian wide characters and most emoji take two, combining marks none.</summary>
    public static int Columns(string text)
    {
        var columns = 0;
        foreach (var rune in text.EnumerateRunes())
        {
            columns += Rune.GetUnicodeCategory(rune) switch
            {
                UnicodeCategory.NonSpacingMark or UnicodeCategory.EnclosingMark or UnicodeCategory.Format => 0,
                _ => IsWide(rune.Value) ? 2 : 1,
            };
        }

        return columns;
    }

    /// <summary>Shortens text to at most <paramref name="max"/> columns on one line, ending with an ellipsis when cut.</summary>
    public static string Shorten(string text, int max)
    {
        var oneLine = string.Join(' ', text.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries));
        if (Columns(oneLine) <= max)
        {
            return oneLine;
        }

        var builder = new StringBuilder();
        var columns = 0;
        foreach (var rune in oneLine.EnumerateRunes())
        {
            var width = Columns(rune.ToString());
            if (columns + width > max - 1)
            {
                break;
            }

            builder.Append(rune.ToString());
            columns += width;
        }

        return builder.ToString().TrimEnd() + "…";
    }

    private static bool IsWide(int c) =>
        c is >= 0x1100 and <= 0x115F
            or >= 0x2E80 and <= 0x303E
            or >= 0x3041 and <= 0x33FF
            or >= 0x3400 and <= 0x4DBF
            or >= 0x4E00 and <= 0x9FFF
            or >= 0xA000 and <= 0xA4CF
            or >= 0xAC00 and <= 0xD7A3
            or >= 0xF900 and <= 0xFAFF
            or >= 0xFE30 and <= 0xFE4F
            or >= 0xFF00 and <= 0xFF60
            or >= 0xFFE0 and <= 0xFFE6
            or >= 0x1F300 and <= 0x1F64F
            or >= 0x1F900 and <= 0x1F9FF
            or >= 0x20000 and <= 0x3FFFD;
}
