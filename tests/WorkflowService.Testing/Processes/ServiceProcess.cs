using System.Diagnostics;
using System.Net.Sockets;
using System.Net;
using WorkflowService.Testing;

namespace WorkflowService.Testing.Processes;

/// <summary>
/// The service under test as a separate process: the Release build of src/WorkflowService under `dotnet`, configured by
/// environment variables like a deployed node, its output kept in a log file.
/// </summary>
internal sealed class ServiceProcess : IAsyncDisposable
{
    private static readonly TimeSpan ReadyDeadline = TimeSpan.FromSeconds(90);

    private readonly LoggedProcess _logged;
    private readonly Process _process;
    private readonly string? _apiKey;

    private ServiceProcess(LoggedProcess logged, Uri address, int signalWorkers, string? apiKey)
    {
        _logged = logged;
        _process = logged.Process;
        _apiKey = apiKey;
        Address = address;
        SignalWorkers = signalWorkers;
    }

    public Uri Address { get; }
    public int SignalWorkers { get; }
    public string LogPath => _logged.LogPath;
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
        var start = new ProcessStartInfo("dotnet", [serviceDll]) { WorkingDirectory = workDirectory };
        start.Environment["ASPNETCORE_URLS"] = $"http://127.0.0.1:{port}";
        // Builds of commits before 2026-11-23 set Urls in appsettings.json, which outranks ASPNETCORE_URLS (interleave's at-REV).
        start.Environment["Urls"] = start.Environment["ASPNETCORE_URLS"];
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        start.Environment["Serilog__MinimumLevel__Default"] = "Warning";
        // Only the host's lifetime messages above Warning: "Application started" tells that the node is up.
        start.Environment["Serilog__MinimumLevel__Override__Microsoft.Hosting.Lifetime"] = "Information";
        start.Environment["Workers__SignalWorkers"] = signalWorkers.ToString(System.Globalization.CultureInfo.InvariantCulture);
        foreach (var (key, value) in environment)
        {
            start.Environment[key] = value;
        }

        // The host logs "Application started" once Kestrel listens and every hosted service has started.
        var logged = LoggedProcess.Start(start, logPath, line => line.Contains("Application started", StringComparison.Ordinal));
        var service = new ServiceProcess(logged, new Uri($"http://127.0.0.1:{port}"), signalWorkers, apiKey);

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
    public Task<int> StopAsync() => _logged.StopAsync();

    /// <summary>SIGKILL: the process ends at once, mid-request and mid-commit, as in a crash or an OOM kill.</summary>
    public Task CrashAsync() => _logged.CrashAsync();

    /// <summary>SIGSTOP: the process stops where it is (a long GC pause, a stalled VM) and holds its claims and connections.</summary>
    public void Freeze() => _logged.Freeze();

    /// <summary>SIGCONT: a frozen process goes on from where it stopped, unaware of the time that passed.</summary>
    public void Thaw() => _logged.Thaw();

    public ValueTask DisposeAsync() => _logged.DisposeAsync();

    /// <summary>The last lines of the service's log (for error messages).</summary>
    public string Tail(int lines = 30) => _logged.Tail(lines);

    private async Task WaitUntilReadyAsync(CancellationToken cancellationToken)
    {
        // Event-driven: the host logs "Application started" once Kestrel listens and every hosted service (store
        // bootstrap, wake-up listener, signal workers) has started; then one readiness request confirms the store.
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(ReadyDeadline);
        try
        {
            await Task.WhenAny(_logged.Up, _process.WaitForExitAsync(deadline.Token)).Unwrap().WaitAsync(deadline.Token);
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
            http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, _apiKey);
        }

        using var response = await http.GetAsync("/health/ready", deadline.Token);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"the service started but /health/ready answered {(int)response.StatusCode}:\n{Tail()}");
        }
    }
}
