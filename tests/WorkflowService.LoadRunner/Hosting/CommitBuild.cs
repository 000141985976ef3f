using System.Diagnostics;
using System.Text.RegularExpressions;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Hosting;

/// <summary>
/// The service as built from an earlier commit of this repository, for an interleaved comparison across commits: the
/// commit checked out in a detached worktree under the temporary directory (kept, so a second run reuses its build), built
/// in Release like the working tree's.
/// </summary>
internal static partial class CommitBuild
{
    private static readonly TimeSpan GitDeadline = TimeSpan.FromMinutes(2);

    public static bool IsCommitVariant(string name) => CommitVariant().IsMatch(name);

    /// <returns>The path of the built service's assembly.</returns>
    public static async Task<string> BuildAsync(string repositoryRoot, string revision, CancellationToken cancellationToken)
    {
        var commit = (await GitAsync(repositoryRoot, ["rev-parse", "--verify", "--quiet", revision + "^{commit}"], cancellationToken)).Trim();
        var worktree = Path.Combine(Path.GetTempPath(), $"wf-at-{commit[..12]}");
        if (!Directory.Exists(worktree))
        {
            await GitAsync(repositoryRoot, ["worktree", "add", "--detach", worktree, commit], cancellationToken);
        }

        await ServiceBuild.RunAsync(worktree, ServiceBuild.Service, cancellationToken);
        return Path.Combine(worktree, "src", "WorkflowService", "bin", "Release", "net10.0", "WorkflowService.dll");
    }

    private static async Task<string> GitAsync(string repositoryRoot, string[] arguments, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo("git", arguments) { WorkingDirectory = repositoryRoot, RedirectStandardOutput = true, RedirectStandardError = true };
        using var git = Process.Start(start) ?? throw new InvalidOperationException("git did not start");
        var output = git.StandardOutput.ReadToEndAsync(cancellationToken);
        var errors = git.StandardError.ReadToEndAsync(cancellationToken);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(GitDeadline);
        await git.WaitForExitAsync(deadline.Token);
        if (git.ExitCode != 0)
        {
            throw new InvalidOperationException($"git {string.Join(' ', arguments)} failed: {(await errors).Trim()}");
        }

        return await output;
    }

    [GeneratedRegex("^at-[0-9a-f]{7,40}$")]
    private static partial Regex CommitVariant();
}
