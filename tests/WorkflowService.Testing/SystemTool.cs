using System.Diagnostics;

namespace WorkflowService.Testing;

/// <summary>Runs one of the machine's tools (mount, losetup, e2fsck, ...) for a fault helper, bounded, failing loudly.</summary>
internal static class SystemTool
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    /// <summary>Runs <paramref name="tool"/>; its standard output, or an exception when it exits with a code not in <paramref name="success"/> (0 alone when empty).</summary>
    public static async Task<string> RunAsync(string tool, IReadOnlyList<string> arguments, CancellationToken cancellationToken, params int[] success)
    {
        using var process = Process.Start(new ProcessStartInfo(tool, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })
                            ?? throw new InvalidOperationException($"{tool} did not start");
        var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var errors = process.StandardError.ReadToEndAsync(cancellationToken);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(Deadline);
        await process.WaitForExitAsync(deadline.Token);
        if (!(success.Length == 0 ? process.ExitCode == 0 : success.Contains(process.ExitCode)))
        {
            throw new InvalidOperationException($"{tool} {string.Join(' ', arguments)} exited with {process.ExitCode}: {await errors}");
        }

        return await output;
    }

    /// <summary>
    /// Runs <paramref name="start"/> to its end within <paramref name="deadline"/> (else kills it and everything it started);
    /// its standard output, or an exception with what it printed when it exits with a code other than 0.
    /// </summary>
    public static async Task<string> RunAsync(ProcessStartInfo start, string what, TimeSpan deadline, CancellationToken cancellationToken)
    {
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{what} did not start");
        var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var errors = process.StandardError.ReadToEndAsync(cancellationToken);
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bounded.CancelAfter(deadline);
        try
        {
            await process.WaitForExitAsync(bounded.Token);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{what} did not finish within {deadline}");
        }

        return process.ExitCode == 0 ? await output : throw new InvalidOperationException($"{what} exited with {process.ExitCode}: {await output}{await errors}");
    }
}
