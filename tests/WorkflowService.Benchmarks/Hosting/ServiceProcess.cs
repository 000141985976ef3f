using System.Diagnostics.CodeAnalysis;
using System.Diagnostics;
using System.Net.Sockets;
using System.Net;
using System.Runtime.InteropServices;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>
/// The service under test as a separate process: the Release build of src/WorkflowService under `dotnet`, configured by
/// environment variables like a deployed node, its output kept in a log file.
/// </summary>
internal sealed partial class ServiceProcess : IAsyncDisposable
{
    private static readonly TimeSpan ReadyDeadline = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan StopDeadline = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly StreamWriter _log;
    private readonly Lock _logLock = new();
    private readonly TaskCompletionSource _started = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private readonly string? _apiKey;

    private ServiceProcess(Process process, Uri address, int signalWorkers, string logPath, StreamWriter log, string? apiKey)
    {
        _process = process;
        _apiKey = apiKey;
        Address = address;
        SignalWorkers = signalWorkers;
        LogPath = logPath;
        _log = log;
    }

    public Uri Address { get; }
    public int SignalWorkers { get; }
    public string LogPath { get; }
    public int Pid => _process.Id;
    /// <summary>Whether the process has ended; true too once this object is disposed (a scenario may kill a node while the load reads it).</summary>
    public bool HasExited
    {
        get
        {
            try
            {
                return _process.HasExited;
            }
            catch (InvalidOperationException)
            {
                return true;
            }
        }
    }

    /// <param name="apiKey">The key the readiness probe sends in X-Api-Key (null: none, for a service without authentication).</param>
    public static async Task<ServiceProcess> StartAsync(
        string serviceDll, IReadOnlyDictionary<string, string> environment, int signalWorkers, string workDirectory, string? apiKey,
        CancellationToken cancellationToken)
    {
        var port = LoopbackPort.Free();
        Directory.CreateDirectory(workDirectory);
        var logPath = Path.Combine(workDirectory, $"service-{DateTime.UtcNow:HHmmss}-{port}.log");
        var start = new ProcessStartInfo("dotnet", [serviceDll])
        {
            WorkingDirectory = workDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.Environment["ASPNETCORE_URLS"] = $"http://127.0.0.1:{port}";
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        start.Environment["Serilog__MinimumLevel__Default"] = "Warning";
        // Only the host's lifetime messages above Warning: "Application started" tells that the node is up.
        start.Environment["Serilog__MinimumLevel__Override__Microsoft.Hosting.Lifetime"] = "Information";
        start.Environment["Workers__SignalWorkers"] = signalWorkers.ToString(System.Globalization.CultureInfo.InvariantCulture);
        foreach (var (key, value) in environment)
        {
            start.Environment[key] = value;
        }

        var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
        var log = new StreamWriter(logPath) { AutoFlush = true };
        var service = new ServiceProcess(process, new Uri($"http://127.0.0.1:{port}"), signalWorkers, logPath, log, apiKey);
        process.OutputDataReceived += (_, e) => service.OnOutput(e.Data);
        process.ErrorDataReceived += (_, e) => service.OnOutput(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        try
        {
            await service.WaitUntilReadyAsync(cancellationToken);
        }
        catch
        {
            await service.DisposeAsync();
            throw;
        }

        return service;
    }

    /// <summary>Stops the service the way an orchestrator does (SIGTERM, then SIGKILL after a deadline); returns its exit code.</summary>
    public async Task<int> StopAsync()
    {
        if (!_process.HasExited)
        {
            // A frozen process (Freeze) would hold the SIGTERM until it runs again: let it run first.
            _ = Kill(_process.Id, SigCont);
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

    /// <summary>SIGKILL: the process ends at once, mid-request and mid-commit, as in a crash or an OOM kill.</summary>
    public async Task CrashAsync()
    {
        if (!_process.HasExited)
        {
            _ = Kill(_process.Id, SigKill);
            await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(StopDeadline);
        }
    }

    /// <summary>SIGSTOP: the process stops where it is (a long GC pause, a stalled VM) and holds its claims and connections.</summary>
    public void Freeze() => _ = Kill(_process.Id, SigStop);

    /// <summary>SIGCONT: a frozen process goes on from where it stopped, unaware of the time that passed.</summary>
    public void Thaw() => _ = Kill(_process.Id, SigCont);

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

    /// <summary>The last lines of the service's log (for error messages).</summary>
    public string Tail(int lines = 30)
    {
        try
        {
            using var stream = new FileStream(LogPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            var all = new StreamReader(stream).ReadToEnd().Split('\n');
            return string.Join('\n', all.TakeLast(lines));
        }
        catch (IOException)
        {
            return "(no log)";
        }
    }

    private async Task WaitUntilReadyAsync(CancellationToken cancellationToken)
    {
        // Event-driven: the host logs "Application started" once Kestrel listens and every hosted service (store
        // bootstrap, wake-up listener, signal workers) has started; then one readiness request confirms the store.
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(ReadyDeadline);
        try
        {
            await Task.WhenAny(_started.Task, _process.WaitForExitAsync(deadline.Token)).Unwrap().WaitAsync(deadline.Token);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"the service at {Address} did not start within {ReadyDeadline}:\n{Tail()}");
        }

        if (_process.HasExited)
        {
            throw new InvalidOperationException($"the service exited with {_process.ExitCode} during start-up:\n{Tail()}");
        }

        using var http = new HttpClient { BaseAddress = Address, Timeout = TimeSpan.FromSeconds(30) };
        if (_apiKey is not null)
        {
            http.DefaultRequestHeaders.Add(Client.BenchApiKey.HeaderName, _apiKey);
        }

        using var response = await http.GetAsync("/health/ready", deadline.Token);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"the service started but /health/ready answered {(int)response.StatusCode}:\n{Tail()}");
        }
    }

    private void OnOutput(string? line)
    {
        if (line is null)
        {
            return;
        }

        if (line.Contains("Application started", StringComparison.Ordinal))
        {
            _started.TrySetResult();
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
    private const int SigKill = 9;
    private const int SigStop = 19;
    private const int SigCont = 18;

    [SuppressMessage("Security", "CA5392:Use DefaultDllImportSearchPaths attribute for P/Invokes", Justification = "libc's kill(2) on Linux, where the attribute's Windows search paths do not apply.")]
    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
