using System.Diagnostics;
using System.Text;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Programs outside .NET that some tests drive: the npm tools of tests/tools (installed with
/// <c>npm ci --prefix tests/tools</c>) and commands on the PATH such as kubectl. A missing tool skips its tests with the
/// reason and the command that installs it, unless CI listed the tool's group in WORKFLOW_TESTS_REQUIRE_TOOLS, where
/// that is a failure (the same rule as WORKFLOW_TESTS_REQUIRE_BACKENDS).
/// </summary>
public static class ExternalTools
{
    public const string RequireVariable = RequiredLists.Tools;

    /// <summary>The npm project that pins the tools' versions.</summary>
    public static string NpmProject => Repository.Path("tests", "tools");

    /// <summary>The path of an installed npm tool's command (node_modules/.bin), or the test ends skipped or failed.</summary>
    public static string Npm(string command)
    {
        var path = System.IO.Path.Combine(NpmProject, "node_modules", ".bin", command);
        if (!File.Exists(path))
        {
            Unavailable("npm", $"{command} is not installed: run `npm ci --prefix tests/tools` (needs Node.js and npm)");
        }

        return path;
    }

    /// <summary>The path of a command on the PATH, or the test ends skipped or failed.</summary>
    public static string OnPath(string command, string group, string howToInstall)
    {
        foreach (var directory in (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(System.IO.Path.PathSeparator))
        {
            var candidate = System.IO.Path.Combine(directory, command);
            if (directory.Length > 0 && File.Exists(candidate))
            {
                return candidate;
            }
        }

        Unavailable(group, $"{command} is not on the PATH: {howToInstall}");
        return command;
    }

    /// <summary>Runs a command to its end within the timeout (then kills it) and returns its exit code and output.</summary>
    public static async Task<ToolRun> RunAsync(
        string command,
        IEnumerable<string> arguments,
        string workingDirectory,
        TimeSpan timeout,
        IReadOnlyDictionary<string, string?>? environment = null)
    {
        var start = new ProcessStartInfo(command)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // The tools run offline: no update checks or telemetry calls out of the machine.
        start.Environment["REDOCLY_TELEMETRY"] = "off";
        start.Environment["REDOCLY_SUPPRESS_UPDATE_NOTICE"] = "true";
        start.Environment["NO_UPDATE_NOTIFIER"] = "1";
        foreach (var (key, value) in environment ?? new Dictionary<string, string?>())
        {
            start.Environment[key] = value;
        }

        using var process = Process.Start(start)!;
        var output = new StringBuilder();
        var error = new StringBuilder();
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (output) output.AppendLine(e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (error) error.AppendLine(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync(CancellationToken.None);
            throw new TimeoutException($"{System.IO.Path.GetFileName(command)} did not end within {timeout}:\n{output}\n{error}");
        }

        lock (output)
        lock (error)
        {
            return new ToolRun(process.ExitCode, output.ToString(), error.ToString());
        }
    }

    public static void Unavailable(string group, string reason)
    {
        if (RequiredLists.Requires(RequireVariable, group))
        {
            Assert.Fail($"{group} tools are required here ({RequireVariable}) but unavailable: {reason}");
        }

        Assert.Skip($"{group} tools unavailable: {reason}");
    }
}

/// <summary>How an external command ended.</summary>
public sealed record ToolRun(int ExitCode, string Output, string Error)
{
    public override string ToString() => $"exit {ExitCode}\n{Output}\n{Error}";
}
