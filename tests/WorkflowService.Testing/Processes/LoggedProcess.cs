using System.Diagnostics;

namespace WorkflowService.Testing.Processes;

/// <summary>
/// A child process the runner starts (the service, a peer's service): its output kept in a log file and watched for the
/// first line that says it is up; signalled with kill(2); stopped as an orchestrator stops it (SIGTERM, then SIGKILL after
/// a deadline).
/// </summary>
internal sealed class LoggedProcess : IAsyncDisposable
{
    private static readonly TimeSpan StopDeadline = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly StreamWriter _log;
    private readonly Lock _logLock = new();
    private readonly Func<string, bool> _isUpLine;
    private readonly Action<string>? _onStandardOutput;
    private readonly TaskCompletionSource<string> _up = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private LoggedProcess(Process process, string logPath, Func<string, bool> isUpLine, Action<string>? onStandardOutput)
    {
        _process = process;
        _isUpLine = isUpLine;
        _onStandardOutput = onStandardOutput;
        LogPath = logPath;
        _log = new StreamWriter(logPath) { AutoFlush = true };
    }

    public string LogPath { get; }
    public Process Process => _process;

    /// <summary>The first output line that says the process is up.</summary>
    public Task<string> Up => _up.Task;

    /// <summary>Starts <paramref name="start"/> (its output redirected here) with its output written to <paramref name="logPath"/>.</summary>
    /// <param name="onStandardOutput">Also given every line of standard output (not standard error), in order.</param>
    public static LoggedProcess Start(ProcessStartInfo start, string logPath, Func<string, bool> isUpLine, Action<string>? onStandardOutput = null)
    {
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.UseShellExecute = false;
        var process = Process.Start(start) ?? throw new InvalidOperationException($"{start.FileName} did not start");
        var logged = new LoggedProcess(process, logPath, isUpLine, onStandardOutput);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                logged._onStandardOutput?.Invoke(e.Data);
            }

            logged.OnOutput(e.Data);
        };
        process.ErrorDataReceived += (_, e) => logged.OnOutput(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return logged;
    }

    /// <summary>SIGTERM (after SIGCONT: a frozen process would hold it), then SIGKILL after a deadline; returns the exit code.</summary>
    public async Task<int> StopAsync()
    {
        if (!_process.HasExited)
        {
            Signal(UnixSignal.Cont);
            Signal(UnixSignal.Term);
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

    /// <summary>SIGKILL: the process ends at once, as in a crash or an OOM kill.</summary>
    public async Task CrashAsync()
    {
        if (!_process.HasExited)
        {
            Signal(UnixSignal.Kill);
            await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(StopDeadline);
        }
    }

    /// <summary>SIGSTOP: the process stops where it is.</summary>
    public void Freeze() => Signal(UnixSignal.Stop);

    /// <summary>SIGCONT: a frozen process goes on.</summary>
    public void Thaw() => Signal(UnixSignal.Cont);

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

    /// <summary>The last lines of the log (for error messages).</summary>
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

    private void Signal(int signal) => UnixSignal.Send(_process.Id, signal);

    private void OnOutput(string? line)
    {
        if (line is null)
        {
            return;
        }

        if (_isUpLine(line))
        {
            _up.TrySetResult(line);
        }

        lock (_logLock)
        {
            if (_log.BaseStream is { CanWrite: true })
            {
                _log.WriteLine(line);
            }
        }
    }
}
