using System.Text;
using System.Text.Json;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>One instruction of a Dockerfile: its keyword (upper case), its arguments as written, and its first line.</summary>
public sealed record DockerInstruction(string Keyword, string Arguments, int Line)
{
    public override string ToString() => $"line {Line}: {Keyword} {Arguments}";

    /// <summary>The arguments as words: a JSON array (exec form) as its strings, else split on blanks outside quotes.</summary>
    public IReadOnlyList<string> Words()
    {
        var text = Arguments.Trim();
        if (text.StartsWith('[') && text.EndsWith(']'))
        {
            try
            {
                return JsonSerializer.Deserialize<string[]>(text) ?? [];
            }
            catch (JsonException)
            {
                // Not an exec form after all: Docker reads it as plain words too.
            }
        }

        var words = new List<string>();
        var word = new StringBuilder();
        var inWord = false;
        char? quote = null;
        foreach (var c in text)
        {
            if (quote is { } open)
            {
                if (c == open)
                {
                    quote = null;
                }
                else
                {
                    word.Append(c);
                }
            }
            else if (c is '"' or '\'')
            {
                quote = c;
                inWord = true;
            }
            else if (char.IsWhiteSpace(c))
            {
                if (inWord)
                {
                    words.Add(word.ToString());
                    word.Clear();
                    inWord = false;
                }
            }
            else
            {
                word.Append(c);
                inWord = true;
            }
        }

        if (inWord)
        {
            words.Add(word.ToString());
        }

        return words;
    }
}

/// <summary>A build stage: <c>FROM image [AS name]</c> and the instructions up to the next <c>FROM</c>.</summary>
public sealed record DockerStage(int Index, string? Name, string BaseImage, IReadOnlyList<DockerInstruction> Instructions)
{
    public IEnumerable<DockerInstruction> All(string keyword) => Instructions.Where(i => i.Keyword == keyword);
}

/// <summary>
/// A Dockerfile read the way the engine reads it: comment lines dropped (inside continuations too), lines ending in a
/// backslash joined, global <c>ARG</c>s before the first <c>FROM</c>, one <see cref="DockerStage"/> per <c>FROM</c>.
/// </summary>
public sealed class Dockerfile
{
    private Dockerfile(IReadOnlyList<DockerInstruction> globalArgs, IReadOnlyList<DockerStage> stages)
    {
        GlobalArgs = globalArgs;
        Stages = stages;
    }

    public IReadOnlyList<DockerInstruction> GlobalArgs { get; }

    public IReadOnlyList<DockerStage> Stages { get; }

    /// <summary>The last stage: what <c>docker build</c> without <c>--target</c> makes.</summary>
    public DockerStage Final => Stages[^1];

    public DockerStage Stage(string nameOrIndex) =>
        Stages.FirstOrDefault(s => string.Equals(s.Name, nameOrIndex, StringComparison.OrdinalIgnoreCase))
        ?? (int.TryParse(nameOrIndex, System.Globalization.CultureInfo.InvariantCulture, out var index) && index < Stages.Count
            ? Stages[index]
            : throw new InvalidOperationException($"the Dockerfile has no stage '{nameOrIndex}'"));

    public static Dockerfile Parse(string text)
    {
        var globalArgs = new List<DockerInstruction>();
        var stages = new List<DockerStage>();
        List<DockerInstruction>? current = null;
        (string? Name, string Image) from = (null, string.Empty);

        foreach (var instruction in Instructions(text))
        {
            if (instruction.Keyword == "FROM")
            {
                Close();
                var words = instruction.Words();
                from = (words.Count >= 3 && words[1].Equals("AS", StringComparison.OrdinalIgnoreCase) ? words[2] : null, words[0]);
                current = [];
            }
            else if (current is null)
            {
                if (instruction.Keyword != "ARG")
                {
                    throw new InvalidOperationException($"{instruction}: only ARG may come before the first FROM");
                }

                globalArgs.Add(instruction);
            }
            else
            {
                current.Add(instruction);
            }
        }

        Close();
        return new Dockerfile(globalArgs, stages);

        void Close()
        {
            if (current is not null)
            {
                stages.Add(new DockerStage(stages.Count, from.Name, from.Image, current));
            }
        }
    }

    private static IEnumerable<DockerInstruction> Instructions(string text)
    {
        var lines = text.ReplaceLineEndings("\n").Split('\n');
        var joined = new StringBuilder();
        var firstLine = 0;
        for (var i = 0; i < lines.Length; i++)
        {
            var line = lines[i];
            var trimmed = line.TrimStart();
            if (trimmed.StartsWith('#') || (trimmed.Length == 0 && joined.Length == 0))
            {
                continue;
            }

            if (joined.Length == 0)
            {
                firstLine = i + 1;
            }

            var continues = line.TrimEnd().EndsWith('\\');
            joined.Append(continues ? line.TrimEnd()[..^1] : line).Append(' ');
            if (continues)
            {
                continue;
            }

            var instruction = joined.ToString().Trim();
            joined.Clear();
            if (instruction.Length == 0)
            {
                continue;
            }

            var space = instruction.IndexOfAny([' ', '\t']);
            yield return space < 0
                ? new DockerInstruction(instruction.ToUpperInvariant(), string.Empty, firstLine)
                : new DockerInstruction(instruction[..space].ToUpperInvariant(), instruction[(space + 1)..].Trim(), firstLine);
        }
    }
}
