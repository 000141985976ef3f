using WorkflowService.OperatorConsole;

namespace WorkflowService.Tests.Console;

public sealed class DefinitionDiffTests
{
    private static string Lines(int count, Func<int, string> line) => string.Join('\n', Enumerable.Range(1, count).Select(line));

    [Fact]
    public void A_changed_line_is_shown_removed_then_added_with_three_lines_of_context_and_the_rest_folded()
    {
        var before = Lines(20, i => $"line {i}");
        var after = Lines(20, i => i == 10 ? "line ten" : $"line {i}");

        var rows = DefinitionDiff.Of(before, after);

        Assert.Equal(
            ["Gap:6 unchanged lines", "Same:line 7", "Same:line 8", "Same:line 9", "Removed:line 10", "Added:line ten", "Same:line 11", "Same:line 12",
                "Same:line 13", "Gap:7 unchanged lines"],
            rows.Select(r => $"{r.Kind}:{r.Text}"));
        var removed = Assert.Single(rows, r => r.Kind == DiffRowKind.Removed);
        var added = Assert.Single(rows, r => r.Kind == DiffRowKind.Added);
        Assert.Equal((10, (int?)null), (removed.Before!.Value, removed.After));
        Assert.Equal(((int?)null, 10), (added.Before, added.After!.Value));
    }

    [Fact]
    public void Two_equal_versions_have_no_rows()
    {
        var text = Lines(5, i => $"line {i}");

        Assert.Empty(DefinitionDiff.Of(text, text));
    }

    [Fact]
    public void Lines_added_at_the_end_are_numbered_in_the_new_version_only()
    {
        var rows = DefinitionDiff.Of("a\nb", "a\nb\nc");

        Assert.Equal(["Same:a", "Same:b", "Added:c"], rows.Select(r => $"{r.Kind}:{r.Text}"));
        Assert.Equal(3, rows[^1].After);
    }
}
