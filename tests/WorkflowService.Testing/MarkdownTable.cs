using System.Text;

namespace WorkflowService.Testing;

/// <summary>A Markdown table: headers starting with '&gt;' are right-aligned (the '&gt;' is dropped).</summary>
internal sealed class MarkdownTable(params string[] headers)
{
    private readonly List<string[]> _rows = [];

    public MarkdownTable Add(params object?[] cells)
    {
        _rows.Add(cells.Select(c => (c?.ToString() ?? "—").Replace("|", "\\|", StringComparison.Ordinal)).ToArray());
        return this;
    }

    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append("| ").AppendJoin(" | ", headers.Select(h => h.TrimStart('>'))).AppendLine(" |");
        text.Append('|').AppendJoin('|', headers.Select(h => h.StartsWith('>') ? " ---: " : " --- ")).AppendLine("|");
        foreach (var row in _rows)
        {
            text.Append("| ").AppendJoin(" | ", row).AppendLine(" |");
        }

        return text.ToString();
    }
}
