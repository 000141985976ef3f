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
}
