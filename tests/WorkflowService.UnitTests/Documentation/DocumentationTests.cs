using WorkflowService.Testing;

namespace WorkflowService.UnitTests.Documentation;

/// <summary>
/// The README and the pages under docs/ as a reader meets them on GitHub: every relative link leads to a file that
/// exists and, into a Markdown page, to a heading it has; the README stays short, and CI runs the test command it gives.
/// </summary>
public sealed class DocumentationTests
{
    private const int ReadmeMaxLines = 150;

    private static readonly string Root = RepositoryRoot.Find();

    private static readonly string[] PageFolders = ["docs", "compose", "deploy"];

    /// <summary>The top-level pages and every page under docs/, compose/ and deploy/ (generated reports included).</summary>
    private static IEnumerable<string> Pages() =>
        Directory.EnumerateFiles(Root, "*.md")
            .Concat(PageFolders
                .Select(folder => Path.Combine(Root, folder))
                .Where(Directory.Exists)
                .SelectMany(folder => Directory.EnumerateFiles(folder, "*.md", SearchOption.AllDirectories)))
            .Order(StringComparer.Ordinal);

    [Fact]
    public void Every_relative_link_in_the_readme_and_docs_leads_to_a_file_and_heading_that_exist()
    {
        var pages = Pages().ToList();
        var broken = pages.SelectMany(BrokenLinks).ToList();

        Assert.Contains(Path.Combine(Root, "README.md"), pages);
        Assert.Contains(Path.Combine(Root, "docs", "configuration.md"), pages);
        Assert.True(broken.Count == 0, "broken links:\n" + string.Join('\n', broken));
    }

    [Theory]
    [InlineData("Settings (`Console`)", "settings-console")]
    [InlineData("Tenants: how it is built (issue #12, last point)", "tenants-how-it-is-built-issue-12-last-point")]
    [InlineData("1. node-kill on sqlite", "1-node-kill-on-sqlite")]
    [InlineData("Stores & wake-ups", "stores--wake-ups")]
    [InlineData("**Bold** and [a link](x.md)", "bold-and-a-link")]
    [InlineData("max_line_length in Köln", "max_line_length-in-köln")]
    public void A_headings_anchor_follows_GitHubs_rules(string heading, string anchor) =>
        Assert.Equal(anchor, MarkdownPage.Slug(heading));

    [Fact]
    public void Repeated_headings_get_numbered_anchors_as_on_GitHub()
    {
        var page = new MarkdownPage("# Notes\n\n## Notes\n\ntext\n\n### Notes\n\n## Notes 1\n");

        Assert.Equal(["notes", "notes-1", "notes-2", "notes-1-1"], page.Anchors);
    }

    [Fact]
    public void Links_and_headings_inside_code_are_not_read_as_such()
    {
        var page = new MarkdownPage(
            "See [the format](docs/format.md#steps) and ![a picture](<docs/a b.png> \"title\").\n" +
            "Inline `[not](a-link.md)` stays text.\n" +
            "  ```bash\n  # not a heading\n  echo '[no](link.md)'\n  ```\n" +
            "# After the code\n");

        Assert.Equal(["docs/format.md#steps", "docs/a b.png"], page.LinkTargets);
        Assert.Equal(["after-the-code"], page.Anchors);
    }

    [Fact]
    public void The_readme_stays_short_enough_to_read_to_the_end()
    {
        var lines = File.ReadAllLines(Path.Combine(Root, "README.md")).Length;

        Assert.True(lines <= ReadmeMaxLines, $"README.md has {lines} lines, more than {ReadmeMaxLines}: move the detail to a page under docs/ and link it");
    }

    [Fact]
    public void The_ci_script_runs_the_readmes_test_command()
    {
        var readmeCommands = File.ReadAllLines(Path.Combine(Root, "README.md"))
            .SkipWhile(line => !line.StartsWith("```", StringComparison.Ordinal)).Skip(1)
            .TakeWhile(line => !line.StartsWith("```", StringComparison.Ordinal))
            .Select(line => line.Split('#')[0].Trim())
            .ToList();
        var ci = File.ReadAllLines(Path.Combine(Root, ".ci", "run"));
        var marker = Array.FindIndex(ci, line => line.Trim() == "# The README's test command:");

        Assert.Equal(2, readmeCommands.Count);
        Assert.StartsWith("dotnet run ", readmeCommands[0], StringComparison.Ordinal);
        Assert.True(marker >= 0, ".ci/run has no \"# The README's test command:\" line");
        Assert.StartsWith(readmeCommands[1] + " ", ci[marker + 1] + " ", StringComparison.Ordinal);
    }

    private static IEnumerable<string> BrokenLinks(string pagePath)
    {
        var page = new MarkdownPage(File.ReadAllText(pagePath));
        var name = Path.GetRelativePath(Root, pagePath).Replace('\\', '/');
        foreach (var link in page.LinkTargets)
        {
            if (IsExternal(link))
            {
                continue;
            }

            var hash = link.IndexOf('#', StringComparison.Ordinal);
            var path = Uri.UnescapeDataString(hash < 0 ? link : link[..hash]);
            var anchor = hash < 0 ? null : Uri.UnescapeDataString(link[(hash + 1)..]);
            var target = path.Length == 0 ? pagePath
                : Path.GetFullPath(path.StartsWith('/') ? Path.Combine(Root, path.TrimStart('/')) : Path.Combine(Path.GetDirectoryName(pagePath)!, path));

            if (Path.GetRelativePath(Root, target).StartsWith("..", StringComparison.Ordinal) || !(File.Exists(target) || Directory.Exists(target)))
            {
                yield return $"{name}: ({link}) names no file in the repository";
            }
            else if (anchor is not null && target.EndsWith(".md", StringComparison.OrdinalIgnoreCase)
                     && !new MarkdownPage(File.ReadAllText(target)).Anchors.Contains(anchor))
            {
                yield return $"{name}: ({link}) names no heading of {Path.GetRelativePath(Root, target).Replace('\\', '/')}";
            }
        }
    }

    /// <summary>A link with a scheme (https:, mailto:) or a network path (//host) leaves the repository.</summary>
    private static bool IsExternal(string link) =>
        link.StartsWith("//", StringComparison.Ordinal)
        || (link.IndexOf(':', StringComparison.Ordinal) is var colon and > 0
            && char.IsAsciiLetter(link[0])
            && link[..colon].All(c => char.IsAsciiLetterOrDigit(c) || c is '+' or '.' or '-'));
}
