namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// The release before versioned migrations (schema 5, the baseline), built from its commit in this repository's history:
/// the real binary an operator runs today, so an upgrade test starts from the database it writes and a rolling-upgrade
/// test runs it beside this build. Built once per machine (kept under the temp folder by commit); a checkout without the
/// commit skips its tests with the reason, unless CI requires "previous-release" in WORKFLOW_TESTS_REQUIRE_TOOLS.
/// </summary>
public static class PreviousRelease
{
    /// <summary>The last commit of schema 5 (before migrations): its build is the release being upgraded from.</summary>
    public const string Commit = "fe2b0757fe0be14dfbff7b870352b41c8825db56";

    /// <summary>Its schema.</summary>
    public const int Schema = 5;

    private static readonly SemaphoreSlim Building = new(1, 1);
    private static string? _built;

    /// <summary>The path of the previous release's WorkflowService.dll, built on first use.</summary>
    public static async Task<string> ServiceDllAsync()
    {
        await Building.WaitAsync(TestContext.Current.CancellationToken);
        try
        {
            return _built ??= await BuildAsync();
        }
        finally
        {
            Building.Release();
        }
    }

    private static async Task<string> BuildAsync()
    {
        var folder = Path.Combine(Path.GetTempPath(), "workflow-previous-release", Commit[..12]);
        var dll = Path.Combine(folder, "src", "WorkflowService", "bin", "Release", "net10.0", "WorkflowService.dll");
        var done = Path.Combine(folder, ".built");
        if (File.Exists(done) && File.Exists(dll))
        {
            return dll;
        }

        var git = ExternalTools.OnPath("git", "previous-release", "install git (the upgrade tests build the previous release from its commit)");
        var has = await ExternalTools.RunAsync(git, ["cat-file", "-e", Commit + "^{commit}"], Repository.Root, TimeSpan.FromSeconds(30));
        if (has.ExitCode != 0)
        {
            ExternalTools.Unavailable("previous-release",
                $"commit {Commit[..12]} (the release before migrations) is not in this checkout's history: clone the repository with its history");
        }

        if (Directory.Exists(folder))
        {
            Directory.Delete(folder, recursive: true);
        }

        Directory.CreateDirectory(folder);
        var archive = Path.Combine(Path.GetTempPath(), $"workflow-previous-release-{Commit[..12]}-{Environment.ProcessId}.tar");
        try
        {
            Check(await ExternalTools.RunAsync(git, ["archive", "--format=tar", "-o", archive, Commit], Repository.Root, TimeSpan.FromMinutes(1)), "git archive");
            Check(await ExternalTools.RunAsync("tar", ["-xf", archive, "-C", folder], folder, TimeSpan.FromMinutes(1)), "tar");
        }
        finally
        {
            File.Delete(archive);
        }

        // Only the service and what it references; no build server left behind to outlive the test run.
        Check(await ExternalTools.RunAsync("dotnet",
            ["build", Path.Combine(folder, "src", "WorkflowService", "WorkflowService.csproj"), "-c", "Release", "--disable-build-servers",
                "-nodeReuse:false", "-p:UseSharedCompilation=false", "-v:q", "-nologo"],
            folder, TimeSpan.FromMinutes(10)), "dotnet build of the previous release");
        await File.WriteAllTextAsync(done, Commit);
        return dll;
    }

    private static void Check(ToolRun run, string what)
    {
        if (run.ExitCode != 0)
        {
            throw new InvalidOperationException($"{what} failed: {run}");
        }
    }
}
