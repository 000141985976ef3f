using System.Diagnostics;

namespace WorkflowService.Testing.Processes;

/// <summary>Builds the service in Release before a run, so that the measured binary is the working tree's.</summary>
internal static class ServiceBuild
{
    /// <summary>The service itself.</summary>
    public const string Service = "src/WorkflowService";

    /// <summary>The service with the fault table's test-only store decorator (it builds the service too).</summary>
    public const string FaultHost = "tests/WorkflowService.FaultHost";

    /// <summary>
    /// Where <see cref="PublishReadyToRunAsync"/> puts the service published as the Dockerfile publishes it (ReadyToRun for
    /// linux-x64, framework-dependent), relative to the repository root: under bin/, so never committed.
    /// </summary>
    public static readonly string ReadyToRunDirectory = Path.Combine("src", "WorkflowService", "bin", "Release", "net10.0", "linux-x64", "publish-readytorun");

    private static readonly TimeSpan Deadline = TimeSpan.FromMinutes(10);

    public static Task RunAsync(string repositoryRoot, string project, CancellationToken cancellationToken)
    {
        Console.WriteLine($"building {project} (Release) ...");
        return RunDotnetAsync(repositoryRoot, ["build", "-c", "Release", "--nologo", "-v", "quiet", project], "building the service", cancellationToken);
    }

    /// <summary>
    /// Publishes the service with ReadyToRun (the Dockerfile's publish): its assemblies and their dependencies' carry native
    /// code compiled ahead of time, so a fresh process JIT-compiles only what tiering later re-optimises.
    /// </summary>
    public static async Task<string> PublishReadyToRunAsync(string repositoryRoot, CancellationToken cancellationToken)
    {
        Console.WriteLine($"publishing {Service} (Release, ReadyToRun, linux-x64) ...");
        var output = Path.Combine(repositoryRoot, ReadyToRunDirectory);
        await RunDotnetAsync(repositoryRoot,
            ["publish", "-c", "Release", "-r", "linux-x64", "--self-contained", "false", "-p:PublishReadyToRun=true", "-p:UseAppHost=false",
             "--nologo", "-v", "quiet", "-o", output, Service],
            "publishing the service with ReadyToRun", cancellationToken);
        return Path.Combine(output, "WorkflowService.dll");
    }

    /// <summary>
    /// The runtime settings the image sets for the service (the Dockerfile's <c>ENV DOTNET_…</c> lines): settings the
    /// runtime reads only from the environment, such as the GC's gen0 budget. A shipped run gives them to every service
    /// process, so that it measures what the image runs, read from the one place that ships them.
    /// </summary>
    public static IReadOnlyDictionary<string, string> ImageRuntimeSettings(string repositoryRoot)
    {
        var settings = new Dictionary<string, string>(StringComparer.Ordinal);
        // Continuation lines joined, so that one ENV may set several variables over several lines.
        var text = File.ReadAllText(Path.Combine(repositoryRoot, "Dockerfile")).Replace("\\\n", " ", StringComparison.Ordinal);
        foreach (var line in text.Split('\n'))
        {
            var trimmed = line.Trim();
            if (!trimmed.StartsWith("ENV ", StringComparison.Ordinal))
            {
                continue;
            }

            foreach (var pair in trimmed[4..].Split(' ', StringSplitOptions.RemoveEmptyEntries))
            {
                var equals = pair.IndexOf('=', StringComparison.Ordinal);
                if (equals > 0 && pair.StartsWith("DOTNET_", StringComparison.Ordinal))
                {
                    settings[pair[..equals]] = pair[(equals + 1)..].Trim('"');
                }
            }
        }

        return settings;
    }

    private static async Task RunDotnetAsync(string repositoryRoot, string[] arguments, string what, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo("dotnet", arguments)
        {
            WorkingDirectory = repositoryRoot,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var build = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
        var output = build.StandardOutput.ReadToEndAsync(cancellationToken);
        var errors = build.StandardError.ReadToEndAsync(cancellationToken);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(Deadline);
        try
        {
            await build.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            build.Kill(entireProcessTree: true);
            throw new TimeoutException($"{what} took longer than {Deadline}");
        }

        if (build.ExitCode != 0)
        {
            throw new InvalidOperationException($"{what} failed:\n{await output}\n{await errors}");
        }
    }
}
