using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace WorkflowService.UnitTests.Documentation;

/// <summary>
/// One Markdown file as GitHub renders it, for the link checks: the links written in its prose (not in code) and the
/// anchors its headings get.
/// </summary>
public sealed partial class MarkdownPage
{
    private readonly List<string> _proseLines;

    public MarkdownPage(string text)
    {
        _proseLines = ProseLines(text.ReplaceLineEndings("\n").Split('\n'));
    }

    /// <summary>Every link and image target in the prose, as written (angle brackets and titles removed).</summary>
    public IReadOnlyList<string> LinkTargets =>
        _proseLines
            .Select(line => InlineCode().Replace(line, string.Empty))
            .SelectMany(line => LinkTarget().Matches(line))
            .Select(m => m.Groups["target"].Value)
            .ToList();

    /// <summary>The anchors GitHub gives the headings, in order, duplicates numbered (-1, -2, ...) as GitHub does.</summary>
    public IReadOnlyList<string> Anchors
    {
        get
        {
            var seen = new Dictionary<string, int>(StringComparer.Ordinal);
            var anchors = new List<string>();
            foreach (var line in _proseLines)
            {
                var heading = Heading().Match(line);
                if (!heading.Success)
                {
                    continue;
                }

                var slug = Slug(heading.Groups["text"].Value);
                var anchor = slug;
                while (seen.ContainsKey(anchor))
                {
                    anchor = $"{slug}-{++seen[slug]}";
                }

                seen[anchor] = 0;
                anchors.Add(anchor);
            }

            return anchors;
        }
    }

    /// <summary>
    /// GitHub's anchor for a heading (github-slugger): the rendered text in lower case, every character that is not a
    /// letter, digit, mark, underscore, hyphen or space removed, spaces turned into hyphens.
    /// </summary>
    public static string Slug(string heading)
    {
        var text = LinkOrImage().Replace(heading, "${text}").Replace("`", string.Empty, StringComparison.Ordinal)
            .Replace("*", string.Empty, StringComparison.Ordinal).Trim().ToLowerInvariant();
        var slug = new StringBuilder(text.Length);
        foreach (var c in text)
        {
            var kept = char.GetUnicodeCategory(c) switch
            {
                UnicodeCategory.UppercaseLetter or UnicodeCategory.LowercaseLetter or UnicodeCategory.TitlecaseLetter
                    or UnicodeCategory.ModifierLetter or UnicodeCategory.OtherLetter or UnicodeCategory.NonSpacingMark
                    or UnicodeCategory.SpacingCombiningMark or UnicodeCategory.EnclosingMark
                    or UnicodeCategory.DecimalDigitNumber or UnicodeCategory.LetterNumber or UnicodeCategory.OtherNumber
                    or UnicodeCategory.ConnectorPunctuation => true,
                _ => c is '-' or ' ',
            };
            if (kept)
            {
                slug.Append(c == ' ' ? '-' : c);
            }
        }

        return slug.ToString();
    }

    /// <summary>The lines outside fenced code blocks (``` or ~~~, indented or not, closed by a fence as long).</summary>
    private static List<string> ProseLines(string[] lines)
    {
        var prose = new List<string>();
        string? fence = null;
        foreach (var line in lines)
        {
            var trimmed = line.TrimStart();
            if (fence is null)
            {
                var opening = Fence().Match(trimmed);
                if (opening.Success)
                {
                    fence = opening.Value;
                    continue;
                }

                prose.Add(line);
            }
            else if (trimmed.StartsWith(fence, StringComparison.Ordinal) && trimmed.TrimEnd().Trim(fence[0]).Length == 0)
            {
                fence = null;
            }
        }

        return prose;
    }

    [GeneratedRegex(@"^(`{3,}|~{3,})")]
    private static partial Regex Fence();

    [GeneratedRegex(@"(`+).+?\1")]
    private static partial Regex InlineCode();

    [GeneratedRegex(@"\]\(\s*(?:<(?<target>[^>]+)>|(?<target>[^)\s]+))(?:\s+""[^""]*"")?\s*\)")]
    private static partial Regex LinkTarget();

    [GeneratedRegex(@"!?\[(?<text>[^\]]*)\]\([^)]*\)")]
    private static partial Regex LinkOrImage();

    [GeneratedRegex(@"^ {0,3}#{1,6}\s+(?<text>.*?)(?:\s+#+)?\s*$")]
    private static partial Regex Heading();
}
