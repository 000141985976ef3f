using System.Diagnostics;
using System.Runtime.InteropServices;

namespace WorkflowService.Testing;

/// <summary>The machine the run happened on, and the commit of the service that was measured.</summary>
internal static class MachineFacts
{
    public static Dictionary<string, string> Read(string repositoryRoot) => new(StringComparer.Ordinal)
    {
        ["cores"] = Environment.ProcessorCount.ToString(System.Globalization.CultureInfo.InvariantCulture),
        ["cpu"] = Line("/proc/cpuinfo", "model name") ?? "unknown",
        ["memory"] = Line("/proc/meminfo", "MemTotal") ?? "unknown",
        ["os"] = RuntimeInformation.OSDescription,
        [".NET"] = RuntimeInformation.FrameworkDescription,
        // The last commit that changed the service's source (the tree's HEAD may only add reports on top of it).
        ["service commit"] = Git(repositoryRoot, "log -1 --format=%h -- src") + (Git(repositoryRoot, "status --porcelain -- src").Length > 0 ? " (src modified)" : string.Empty),
        ["tree commit"] = Git(repositoryRoot, "rev-parse --short HEAD"),
        ["layout"] = "load client, service and database on this one machine",
    };

    /// <summary>HEAD, marked where src/ or tests/ differ from it (then the code that ran is not that commit's alone).</summary>
    public static string CodeCommit(string repositoryRoot) =>
        Git(repositoryRoot, "rev-parse --short HEAD") +
        (Git(repositoryRoot, "status --porcelain --untracked-files=no -- src tests").Length > 0 ? " (src or tests modified)" : string.Empty);

    /// <summary>The machine in a few words: its cores and processor.</summary>
    public static string Summary() => $"{Environment.ProcessorCount} cores, {Line("/proc/cpuinfo", "model name") ?? "unknown processor"}";

    private static string? Line(string file, string key)
    {
        try
        {
            return File.ReadLines(file).FirstOrDefault(l => l.StartsWith(key, StringComparison.Ordinal))?.Split(':', 2)[1].Trim();
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static string Git(string directory, string arguments)
    {
        try
        {
            using var git = Process.Start(new ProcessStartInfo("git", arguments) { WorkingDirectory = directory, RedirectStandardOutput = true, RedirectStandardError = true })!;
            var output = git.StandardOutput.ReadToEnd().Trim();
            return git.WaitForExit(10_000) && git.ExitCode == 0 ? output : "unknown";
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "unknown";
        }
    }
}
