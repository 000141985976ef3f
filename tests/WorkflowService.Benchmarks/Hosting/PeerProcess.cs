using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>
/// A peer library's service as a separate process (`dotnet PEER.dll ARGS`), ready once it prints its readiness line; its
/// output kept in a log file. Stopped with SIGTERM, then SIGKILL after a deadline.
/// </summary>
internal sealed partial class PeerProcess : IAsyncDisposable
{
    private static readonly TimeSpan ReadyDeadline = TimeSpan.FromSeconds(60);
    private static readonly TimeSpan StopDeadline = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly StreamWriter _log;
    private readonly Lock _logLock = new();
    private readonly string _readyLine;
    private readonly TaskCompletionSource<string> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private PeerProcess(Process process, string readyLine, string logPath, StreamWriter log)
    {
        _process = process;
        _readyLine = readyLine;
        LogPath = logPath;
        _log = log;
    }

    public string LogPath { get; }
    public int Pid => _process.Id;

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
        var start = new ProcessStartInfo("dotnet", [dll, .. arguments])
        {
            WorkingDirectory = workDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
        var peer = new PeerProcess(process, readyLine, logPath, new StreamWriter(logPath) { AutoFlush = true });
        process.OutputDataReceived += (_, e) => peer.OnOutput(e.Data);
        process.ErrorDataReceived += (_, e) => peer.OnOutput(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            deadline.CancelAfter(ReadyDeadline);
            var exited = process.WaitForExitAsync(deadline.Token);
            try
            {
                if (await Task.WhenAny(peer._ready.Task, exited).WaitAsync(deadline.Token) == exited)
                {
                    throw new InvalidOperationException($"the peer exited with {process.ExitCode} during start-up:\n{peer.Tail()}");
                }
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"the peer did not print '{readyLine}' within {ReadyDeadline}:\n{peer.Tail()}");
            }

            peer.ReadyText = await peer._ready.Task;
        }
        catch
        {
            await peer.DisposeAsync();
            throw;
        }

        return peer;
    }

    /// <summary>SIGTERM, then SIGKILL after a deadline; returns the exit code.</summary>
    public async Task<int> StopAsync()
    {
        if (!_process.HasExited)
        {
            _ = Kill(_process.Id, SigTerm);
            using var deadline = new CancellationTokenSource(StopDeadline);
            try
            {
                await _process.WaitForExitAsync(deadline.Token);
            }
            catch (OperationCanceledException)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10));
            }
        }

        return _process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            await StopAsync();
        }

        _process.Dispose();
        lock (_logLock)
        {
            _log.Dispose();
        }
    }

    /// <summary>The last lines of the peer's log (for error messages).</summary>
    public string Tail(int lines = 30)
    {
        try
        {
            using var stream = new FileStream(LogPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            return string.Join('\n', new StreamReader(stream).ReadToEnd().Split('\n').TakeLast(lines));
        }
        catch (IOException)
        {
            return "(no log)";
        }
    }

    private void OnOutput(string? line)
    {
        if (line is null)
        {
            return;
        }

        if (line.StartsWith(_readyLine, StringComparison.Ordinal))
        {
            _ready.TrySetResult(line);
        }

        lock (_logLock)
        {
            if (_log.BaseStream is { CanWrite: true })
            {
                _log.WriteLine(line);
            }
        }
    }

    private const int SigTerm = 15;

    [SuppressMessage("Security", "CA5392:Use DefaultDllImportSearchPaths attribute for P/Invokes", Justification = "libc's kill(2) on Linux, where the attribute's Windows search paths do not apply.")]
    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
