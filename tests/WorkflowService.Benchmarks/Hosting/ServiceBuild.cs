using System.Diagnostics;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>Builds the service in Release before a run, so that the measured binary is the working tree's.</summary>
internal static class ServiceBuild
{
    /// <summary>The service itself.</summary>
    public const string Service = "src/WorkflowService";

    /// <summary>The service with the fault table's test-only store decorator (it builds the service too).</summary>
    public const string FaultHost = "tests/WorkflowService.FaultHost";

    private static readonly TimeSpan Deadline = TimeSpan.FromMinutes(10);

    public static async Task RunAsync(string repositoryRoot, string project, CancellationToken cancellationToken)
    {
        Console.WriteLine($"building {project} (Release) ...");
        var start = new ProcessStartInfo("dotnet", ["build", "-c", "Release", "--nologo", "-v", "quiet", project])
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
            throw new TimeoutException($"building the service took longer than {Deadline}");
        }

        if (build.ExitCode != 0)
        {
            throw new InvalidOperationException($"building the service failed:\n{await output}\n{await errors}");
        }
    }
}
