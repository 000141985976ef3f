using System.Collections.ObjectModel;
using System.Text.RegularExpressions;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Replays a Dockerfile's stages on this machine, without a Docker engine: each stage gets a folder that stands for its
/// file system, absolute paths (in WORKDIR, COPY, ENV and the RUN lines) are moved under it, COPY takes from the build
/// context (a folder holding exactly what <see cref="DockerBuildContext"/> lets through) or from an earlier stage's folder,
/// and RUN lines run in order under <c>/bin/sh -c</c> with the stage's ARG and ENV values, in the stage's working folder,
/// with this machine's tools standing for the base image's (the .NET SDK for the SDK image).
/// </summary>
/// <remarks>
/// What it finds is what <c>docker build</c> would find in the files: a file the build reads that no COPY brought, a
/// project the restore did not see, a RUN line that fails. What it cannot find is a difference between this machine's
/// tools and the base image's. A stage replayed <see cref="StageMode.Layout"/> only (the runtime stage, whose RUN lines
/// set up the image's own users) applies its WORKDIR, COPY, ENV and VOLUME lines and runs nothing.
/// </remarks>
public sealed partial class DockerfileReplay(Dockerfile dockerfile, string context, string root)
{
    private static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(10);
    private readonly Dictionary<int, ReplayedStage> _done = [];

    /// <summary>Replays a stage (and every stage it copies from, in full) and returns what it left.</summary>
    public async Task<ReplayedStage> ReplayAsync(DockerStage stage, StageMode mode)
    {
        if (_done.TryGetValue(stage.Index, out var done))
        {
            return done;
        }

        var fileSystem = Directory.CreateDirectory(Path.Combine(root, $"stage-{stage.Index}-{stage.Name ?? "unnamed"}")).FullName;
        Directory.CreateDirectory(Path.Combine(fileSystem, "tmp"));
        var replayed = new ReplayedStage(stage, fileSystem);
        var workDir = "/";
        var args = dockerfile.GlobalArgs.SelectMany(a => Assignments(a, [])).ToDictionary(StringComparer.Ordinal);
        var variables = new Dictionary<string, string>(StringComparer.Ordinal);

        foreach (var instruction in stage.Instructions)
        {
            switch (instruction.Keyword)
            {
                case "ARG":
                    foreach (var (name, value) in Assignments(instruction, variables))
                    {
                        // A stage's ARG without a default takes the global one of that name.
                        variables[name] = value.Length > 0 || !args.TryGetValue(name, out var global) ? value : global;
                    }

                    break;
                case "ENV":
                    foreach (var (name, value) in Assignments(instruction, variables))
                    {
                        variables[name] = value;
                        replayed.Environment[name] = MoveAbsolutePaths(value, fileSystem);
                    }

                    break;
                case "WORKDIR":
                    var next = Substitute(instruction.Arguments.Trim(), variables);
                    workDir = next.StartsWith('/') ? next : Path.Combine(workDir, next);
                    Directory.CreateDirectory(Under(fileSystem, workDir));
                    break;
                case "COPY":
                case "ADD":
                    await CopyAsync(instruction, fileSystem, workDir, variables);
                    break;
                case "RUN":
                    if (mode == StageMode.Full)
                    {
                        await RunAsync(instruction, fileSystem, workDir, variables, replayed);
                    }
                    else
                    {
                        replayed.NotRun.Add(instruction);
                    }

                    break;
                case "USER":
                    replayed.User = instruction.Arguments.Trim();
                    break;
                case "EXPOSE":
                    foreach (var port in instruction.Words())
                    {
                        replayed.Exposed.Add(port);
                    }

                    break;
                case "VOLUME":
                    foreach (var volume in instruction.Words())
                    {
                        // A volume's mount point exists when the container runs, whatever the image holds.
                        replayed.Volumes.Add(volume);
                        Directory.CreateDirectory(Under(fileSystem, volume));
                    }

                    break;
                case "ENTRYPOINT":
                    replayed.Entrypoint = instruction.Words();
                    break;
                case "CMD":
                case "LABEL":
                case "HEALTHCHECK":
                case "STOPSIGNAL":
                case "SHELL":
                    replayed.Other.Add(instruction);
                    break;
                default:
                    throw new NotSupportedException($"{instruction}: the replay does not know {instruction.Keyword}");
            }
        }

        replayed.WorkDir = Under(fileSystem, workDir);
        _done[stage.Index] = replayed;
        return replayed;
    }

    /// <summary>A path of a stage's file system, in the folder that stands for it.</summary>
    public static string Under(string fileSystem, string absolute) =>
        Path.GetFullPath(Path.Combine(fileSystem, absolute.TrimStart('/')));

    /// <summary>Every absolute path in <paramref name="text"/> (not the system's own folders) moved under the stage's folder.</summary>
    public static string MoveAbsolutePaths(string text, string fileSystem) =>
        AbsolutePath().Replace(text, match => Under(fileSystem, match.Value));

    private async Task CopyAsync(DockerInstruction instruction, string fileSystem, string workDir, Dictionary<string, string> variables)
    {
        var words = instruction.Words().Select(w => Substitute(w, variables)).ToList();
        string? fromStage = null;
        while (words.Count > 0 && words[0].StartsWith("--", StringComparison.Ordinal))
        {
            var flag = words[0];
            words.RemoveAt(0);
            if (flag.StartsWith("--from=", StringComparison.Ordinal))
            {
                fromStage = flag["--from=".Length..];
            }
            else if (!flag.StartsWith("--chown=", StringComparison.Ordinal) && !flag.StartsWith("--chmod=", StringComparison.Ordinal)
                && flag != "--link")
            {
                throw new NotSupportedException($"{instruction}: the replay does not know {flag}");
            }
        }

        if (words.Count < 2)
        {
            throw new InvalidOperationException($"{instruction}: COPY needs a source and a destination");
        }

        var sourceRoot = fromStage is null ? context : (await ReplayAsync(dockerfile.Stage(fromStage), StageMode.Full)).FileSystem;
        var destination = words[^1];
        var target = Under(fileSystem, destination.StartsWith('/') ? destination : Path.Combine(workDir, destination));
        var intoFolder = destination.EndsWith('/') || words.Count > 2 || Directory.Exists(target);

        foreach (var source in words[..^1])
        {
            var matches = Expand(sourceRoot, source);
            if (matches.Count == 0)
            {
                throw new ReplayFailedException(instruction,
                    $"\"{source}\" not found in {(fromStage is null ? "the build context (tracked and not excluded by .dockerignore)" : $"stage {fromStage}")}");
            }

            foreach (var match in matches)
            {
                if (Directory.Exists(match))
                {
                    CopyFolder(match, target);
                }
                else
                {
                    var file = intoFolder || matches.Count > 1 ? Path.Combine(target, Path.GetFileName(match)) : target;
                    Directory.CreateDirectory(Path.GetDirectoryName(file)!);
                    File.Copy(match, file, overwrite: true);
                }
            }
        }
    }

    private static async Task RunAsync(DockerInstruction instruction, string fileSystem, string workDir, Dictionary<string, string> variables,
        ReplayedStage replayed)
    {
        var words = instruction.Words();
        var execForm = instruction.Arguments.TrimStart().StartsWith('[');
        var command = execForm ? words[0] : "/bin/sh";
        string[] arguments = execForm
            ? [.. words.Skip(1).Select(w => MoveAbsolutePaths(w, fileSystem))]
            : ["-c", MoveAbsolutePaths(instruction.Arguments, fileSystem)];
        var environment = variables.ToDictionary(v => v.Key, v => (string?)MoveAbsolutePaths(v.Value, fileSystem), StringComparer.Ordinal);
        var run = await ExternalTools.RunAsync(command, arguments, Under(fileSystem, workDir), RunTimeout, environment);
        replayed.Runs.Add((instruction, run));
        if (run.ExitCode != 0)
        {
            throw new ReplayFailedException(instruction, $"exit {run.ExitCode}\n{Tail(run.Output)}\n{Tail(run.Error)}");
        }
    }

    private static List<string> Expand(string sourceRoot, string source)
    {
        var path = Under(sourceRoot, source);
        var name = Path.GetFileName(path.TrimEnd('/'));
        if (name.IndexOfAny(['*', '?']) < 0)
        {
            return File.Exists(path) || Directory.Exists(path) ? [path] : [];
        }

        var folder = Path.GetDirectoryName(path.TrimEnd('/'))!;
        if (folder.IndexOfAny(['*', '?']) >= 0)
        {
            throw new NotSupportedException($"COPY {source}: the replay expands wildcards in the last part of a path only");
        }

        return Directory.Exists(folder) ? [.. Directory.EnumerateFileSystemEntries(folder, name).Order(StringComparer.Ordinal)] : [];
    }

    private static void CopyFolder(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories))
        {
            var copy = Path.Combine(to, Path.GetRelativePath(from, file));
            Directory.CreateDirectory(Path.GetDirectoryName(copy)!);
            File.Copy(file, copy, overwrite: true);
        }

        foreach (var folder in Directory.EnumerateDirectories(from, "*", SearchOption.AllDirectories))
        {
            Directory.CreateDirectory(Path.Combine(to, Path.GetRelativePath(from, folder)));
        }
    }

    /// <summary>ARG and ENV assignments: <c>name=value ...</c> (quotes removed), or ENV's older <c>name value</c>.</summary>
    private static IEnumerable<KeyValuePair<string, string>> Assignments(DockerInstruction instruction, Dictionary<string, string> variables)
    {
        var words = instruction.Words();
        if (instruction.Keyword == "ENV" && words.Count >= 2 && !words[0].Contains('=', StringComparison.Ordinal))
        {
            yield return new(words[0], Substitute(string.Join(' ', words.Skip(1)), variables));
            yield break;
        }

        foreach (var word in words)
        {
            var equals = word.IndexOf('=', StringComparison.Ordinal);
            yield return equals < 0 ? new(word, string.Empty) : new(word[..equals], Substitute(word[(equals + 1)..], variables));
        }
    }

    /// <summary>$name and ${name} replaced by the values known so far; unknown ones (the base image's) left as written.</summary>
    private static string Substitute(string text, Dictionary<string, string> variables) =>
        Variable().Replace(text, m =>
        {
            var name = m.Groups["braced"].Success ? m.Groups["braced"].Value : m.Groups["plain"].Value;
            return variables.TryGetValue(name, out var value) ? value : m.Value;
        });

    private static string Tail(string text) => text.Length <= 6000 ? text : "..." + text[^6000..];

    // An absolute path that starts a word (or follows = or >), other than the system's own folders, which the base image
    // and this machine share.
    [GeneratedRegex(@"(?<=^|[\s""'=>(])/(?!(?:dev|proc|sys|usr|bin|sbin|etc|lib|lib64|run)(?:/|\b))[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]*)*")]
    private static partial Regex AbsolutePath();

    [GeneratedRegex(@"\$(?:\{(?<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?<plain>[A-Za-z_][A-Za-z0-9_]*))")]
    private static partial Regex Variable();
}

/// <summary>Whether a stage's RUN lines run (<see cref="Full"/>) or only its files and settings are laid out.</summary>
public enum StageMode
{
    Full,
    Layout,
}

/// <summary>What a replayed stage left: its folder, settings and what its RUN lines printed.</summary>
public sealed class ReplayedStage(DockerStage stage, string fileSystem)
{
    public DockerStage Stage { get; } = stage;

    public string FileSystem { get; } = fileSystem;

    /// <summary>The stage's working folder at its end, in <see cref="FileSystem"/>.</summary>
    public string WorkDir { get; set; } = fileSystem;

    /// <summary>The stage's ENV values, with absolute paths moved under <see cref="FileSystem"/>.</summary>
    public Dictionary<string, string> Environment { get; } = new(StringComparer.Ordinal);

    public string? User { get; set; }

    public Collection<string> Exposed { get; } = [];

    public Collection<string> Volumes { get; } = [];

    public IReadOnlyList<string> Entrypoint { get; set; } = [];

    public Collection<DockerInstruction> Other { get; } = [];

    public Collection<DockerInstruction> NotRun { get; } = [];

    public Collection<(DockerInstruction Instruction, ToolRun Run)> Runs { get; } = [];
}

/// <summary>A Dockerfile instruction that would fail <c>docker build</c>, with what it said.</summary>
public sealed class ReplayFailedException(DockerInstruction instruction, string detail)
    : Exception($"docker build would fail at {instruction}\n{detail}")
{
    public DockerInstruction Instruction { get; } = instruction;
}
