using System.Text;
using System.Text.RegularExpressions;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// What <c>docker build .</c> sends to the engine from a clean checkout: the files git tracks, less those the
/// <c>.dockerignore</c> excludes, matched the way Docker matches them (Go's <c>filepath.Match</c> per path segment,
/// <c>**</c> for any number of segments, a later <c>!pattern</c> taking a path back, a pattern that matches a folder
/// excluding everything under it).
/// </summary>
public sealed class DockerBuildContext
{
    private readonly List<(Regex Pattern, bool Include)> _rules = [];

    public DockerBuildContext(IEnumerable<string> dockerignoreLines)
    {
        foreach (var raw in dockerignoreLines)
        {
            var line = raw.Trim();
            if (line.Length == 0 || line.StartsWith('#'))
            {
                continue;
            }

            var include = line.StartsWith('!');
            var pattern = Clean(include ? line[1..].Trim() : line);
            if (pattern.Contains('[', StringComparison.Ordinal))
            {
                throw new NotSupportedException($".dockerignore: character classes are not replayed ({line})");
            }

            if (pattern.Length > 0)
            {
                _rules.Add((ToRegex(pattern), include));
            }
        }
    }

    /// <summary>The context of a checkout: its tracked files (as they are in the work tree) filtered by its .dockerignore.</summary>
    public static async Task<IReadOnlyList<string>> TrackedFilesAsync(string checkout)
    {
        var git = ExternalTools.OnPath("git", "git", "install git (apt-get install git)");
        var listed = await ExternalTools.RunAsync(git, ["ls-files", "-z", "--cached"], checkout, TimeSpan.FromMinutes(1));
        Assert.True(listed.ExitCode == 0, $"git ls-files failed: {listed}");
        var ignore = Path.Combine(checkout, ".dockerignore");
        var context = new DockerBuildContext(File.Exists(ignore) ? await File.ReadAllLinesAsync(ignore) : []);
        return listed.Output.Split('\0', StringSplitOptions.RemoveEmptyEntries)
            .Where(file => File.Exists(Path.Combine(checkout, file)) && !context.Excludes(file))
            .Order(StringComparer.Ordinal)
            .ToList();
    }

    /// <summary>Whether the path (relative to the context root, with forward slashes) is left out of the context.</summary>
    public bool Excludes(string relativePath)
    {
        // A path is out when the last rule matching it, or any folder above it, excludes it.
        var excluded = false;
        var path = Clean(relativePath);
        foreach (var (pattern, include) in _rules)
        {
            if (MatchesItselfOrAFolderAbove(pattern, path))
            {
                excluded = !include;
            }
        }

        return excluded;
    }

    private static bool MatchesItselfOrAFolderAbove(Regex pattern, string path)
    {
        for (var end = path.Length; end > 0; end = path.LastIndexOf('/', end - 1))
        {
            if (pattern.IsMatch(path[..end]))
            {
                return true;
            }
        }

        return false;
    }

    // Docker cleans each pattern as Go's filepath.Clean does; a leading or trailing slash says nothing more.
    private static string Clean(string pattern)
    {
        var segments = pattern.Replace('\\', '/').Split('/', StringSplitOptions.RemoveEmptyEntries).Where(s => s != ".");
        return string.Join('/', segments);
    }

    private static Regex ToRegex(string pattern)
    {
        var regex = new StringBuilder("^");
        var segments = pattern.Split('/');
        for (var i = 0; i < segments.Length; i++)
        {
            var last = i == segments.Length - 1;
            if (segments[i] == "**")
            {
                // Any number of segments, none included.
                regex.Append(last ? ".*" : "(?:[^/]+/)*");
                continue;
            }

            foreach (var c in segments[i])
            {
                regex.Append(c switch
                {
                    '*' => "[^/]*",
                    '?' => "[^/]",
                    _ => Regex.Escape(c.ToString()),
                });
            }

            if (!last)
            {
                regex.Append('/');
            }
        }

        return new Regex(regex.Append('$').ToString(), RegexOptions.CultureInvariant);
    }
}
