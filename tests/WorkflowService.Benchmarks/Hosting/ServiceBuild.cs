using System.Diagnostics;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>Builds the service in Release before a run, so that the measured binary is the working tree's.</summary>
internal static class ServiceBuild
{
    private static readonly TimeSpan Deadline = TimeSpan.FromMinutes(10);

    public static async Task RunAsync(string repositoryRoot, CancellationToken cancellationToken)
    {
        Console.WriteLine("building src/WorkflowService (Release) ...");
        var start = new ProcessStartInfo("dotnet", ["build", "-c", "Release", "--nologo", "-v", "quiet", Path.Combine("src", "WorkflowService")])
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
