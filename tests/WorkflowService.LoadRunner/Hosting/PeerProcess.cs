using System.Diagnostics;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Hosting;

/// <summary>
/// A peer library's service as a separate process (`dotnet PEER.dll ARGS`), ready once it prints its readiness line; its
/// output kept in a log file. Stopped with SIGTERM, then SIGKILL after a deadline.
/// </summary>
internal sealed class PeerProcess : IAsyncDisposable
{
    private static readonly TimeSpan ReadyDeadline = TimeSpan.FromSeconds(60);

    private readonly LoggedProcess _logged;

    private PeerProcess(LoggedProcess logged) => _logged = logged;

    public string LogPath => _logged.LogPath;
    public int Pid => _logged.Process.Id;

    /// <summary>What the peer printed on its readiness line (its settings).</summary>
    public string ReadyText { get; private set; } = string.Empty;

    public static async Task<PeerProcess> StartAsync(
        string dll, IReadOnlyList<string> arguments, string readyLine, string workDirectory, CancellationToken cancellationToken)
    {
        if (!File.Exists(dll))
        {
            throw new FileNotFoundException($"the peer is not built: {dll} (dotnet build -c Release tests/WorkflowService.Benchmarks builds it)", dll);
        }

        Directory.CreateDirectory(workDirectory);
        var logPath = Path.Combine(workDirectory, $"{Path.GetFileNameWithoutExtension(dll)}-{DateTime.UtcNow:HHmmss-fff}.log");
        var start = new ProcessStartInfo("dotnet", [dll, .. arguments]) { WorkingDirectory = workDirectory };
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        var peer = new PeerProcess(LoggedProcess.Start(start, logPath, line => line.StartsWith(readyLine, StringComparison.Ordinal)));
        var process = peer._logged.Process;

        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            deadline.CancelAfter(ReadyDeadline);
            var exited = process.WaitForExitAsync(deadline.Token);
            try
            {
                if (await Task.WhenAny(peer._logged.Up, exited).WaitAsync(deadline.Token) == exited)
                {
                    throw new InvalidOperationException($"the peer exited with {process.ExitCode} during start-up:\n{peer.Tail()}");
                }
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"the peer did not print '{readyLine}' within {ReadyDeadline}:\n{peer.Tail()}");
            }

            peer.ReadyText = await peer._logged.Up;
        }
        catch
        {
            await peer.DisposeAsync();
            throw;
        }

        return peer;
    }

    /// <summary>SIGTERM, then SIGKILL after a deadline; returns the exit code.</summary>
    public Task<int> StopAsync() => _logged.StopAsync();

    public ValueTask DisposeAsync() => _logged.DisposeAsync();

    /// <summary>The last lines of the peer's log (for error messages).</summary>
    public string Tail(int lines = 30) => _logged.Tail(lines);
}
