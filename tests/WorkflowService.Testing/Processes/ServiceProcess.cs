using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.Testing.Processes;

/// <summary>
/// The service under test as a separate operating-system process (a build of src/WorkflowService under `dotnet`),
/// configured by environment variables like a deployed node, its output kept in a log file. The runners and the
/// integration tests both start nodes through it; <see cref="ServiceProcessOptions"/> holds where they differ.
/// </summary>
public sealed class ServiceProcess : IAsyncDisposable
{
    private readonly LoggedProcess _logged;
    private readonly Process _process;
    private readonly ServiceProcessOptions _options;
    private readonly List<string> _output;

    private ServiceProcess(LoggedProcess logged, Uri address, ServiceProcessOptions options, List<string> output)
    {
        _output = output;
        _logged = logged;
        _process = logged.Process;
        _options = options;
        Address = address;
    }

    public Uri Address { get; }

    /// <summary>The key this node's clients send in X-Api-Key (<see cref="ServiceProcessOptions.ApiKey"/>).</summary>
    public string ApiKey => _options.ApiKey ?? throw new InvalidOperationException("this service was started without an API key");

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

    /// <summary>Every line the process wrote to standard output so far, in order (standard error goes to the log only).</summary>
    public IReadOnlyList<string> OutputLines
    {
        get
        {
            lock (_output)
            {
                return [.. _output];
            }
        }
    }

    /// <summary>Starts the service and waits, within <see cref="ServiceProcessOptions.ReadyDeadline"/>, until it is ready.</summary>
    public static async Task<ServiceProcess> StartAsync(ServiceProcessOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        var port = LoopbackPort.Free();
        Directory.CreateDirectory(options.WorkingDirectory);
        var logDirectory = options.LogDirectory ?? options.WorkingDirectory;
        Directory.CreateDirectory(logDirectory);
        var logPath = Path.Combine(logDirectory, $"service-{DateTime.UtcNow:HHmmss}-{port}.log");
        var start = new ProcessStartInfo("dotnet", [options.ServiceDll]) { WorkingDirectory = options.WorkingDirectory };
        var url = $"http://127.0.0.1:{port}";
        // The standard ways an ASP.NET Core service is told where to listen; only the chosen one is set.
        start.Environment.Remove("ASPNETCORE_URLS");
        start.Environment.Remove("ASPNETCORE_HTTP_PORTS");
        start.Environment.Remove("DOTNET_URLS");
        switch (options.Listen)
        {
            case ListenAddress.AspNetCoreUrls:
                start.Environment["ASPNETCORE_URLS"] = url;
                break;
            case ListenAddress.AspNetCoreUrlsAndUrlsSetting:
                start.Environment["ASPNETCORE_URLS"] = url;
                // Builds of commits before 2026-11-23 set Urls in appsettings.json, which outranks ASPNETCORE_URLS (interleave's at-REV).
                start.Environment["Urls"] = url;
                break;
            case ListenAddress.AspNetCoreHttpPorts:
                start.Environment["ASPNETCORE_HTTP_PORTS"] = port.ToString(CultureInfo.InvariantCulture);
                break;
            case ListenAddress.UrlsArgument:
                start.ArgumentList.Add("--urls");
                start.ArgumentList.Add(url);
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(options), options.Listen, "unknown listen address");
        }

        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        start.Environment["Serilog__MinimumLevel__Default"] = "Warning";
        if (options.Readiness == ServiceReadiness.StartedLogLine)
        {
            // Only the host's lifetime messages above Warning: "Application started" tells that the node is up.
            start.Environment["Serilog__MinimumLevel__Override__Microsoft.Hosting.Lifetime"] = "Information";
        }

        foreach (var (key, value) in options.Environment)
        {
            start.Environment[key.Replace(":", "__", StringComparison.Ordinal)] = value;
        }

        var output = new List<string>();
        // The host logs "Application started" once Kestrel listens and every hosted service has started.
        var logged = LoggedProcess.Start(start, logPath, line => line.Contains("Application started", StringComparison.Ordinal), line =>
        {
            lock (output)
            {
                output.Add(line);
            }
        });
        var service = new ServiceProcess(logged, new Uri(url), options, output);

        try
        {
            await service.WaitUntilReadyAsync(cancellationToken);
        }
        catch
        {
            // A node that never became ready (a bad setting, a port taken between choosing and binding it) is not left
            // running behind the failure.
            await service.DisposeAsync();
            throw;
        }

        return service;
    }

    /// <summary>
    /// A runner's node: <paramref name="signalWorkers"/> signal workers, listening where older builds listen too, ready on
    /// the host's start-up log line, stopped as an orchestrator stops it.
    /// </summary>
    /// <param name="apiKey">The key the readiness probe sends in X-Api-Key (null: none, for a service without authentication).</param>
    internal static Task<ServiceProcess> StartAsync(
        string serviceDll, IReadOnlyDictionary<string, string> environment, int signalWorkers, string workDirectory, string? apiKey,
        CancellationToken cancellationToken)
    {
        var settings = new Dictionary<string, string?>
        {
            ["Workers__SignalWorkers"] = signalWorkers.ToString(CultureInfo.InvariantCulture),
        };
        foreach (var (key, value) in environment)
        {
            settings[key] = value;
        }

        return StartAsync(new ServiceProcessOptions
        {
            ServiceDll = serviceDll,
            WorkingDirectory = workDirectory,
            Environment = settings,
            Listen = ListenAddress.AspNetCoreUrlsAndUrlsSetting,
            ApiKey = apiKey,
        }, cancellationToken);
    }

    /// <summary>A client of this node with its API key (if any) in X-Api-Key.</summary>
    public HttpClient CreateClient()
    {
        var client = new HttpClient { BaseAddress = Address, Timeout = TimeSpan.FromSeconds(30) };
        if (_options.ApiKey is not null)
        {
            client.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, _options.ApiKey);
        }

        return client;
    }

    /// <summary>Stops the service the way an orchestrator does (SIGTERM, then SIGKILL after a deadline); returns its exit code.</summary>
    public Task<int> StopAsync() => _logged.StopAsync();

    /// <summary>SIGKILL: the process ends at once, mid-request and mid-commit, as in a crash or an OOM kill.</summary>
    public Task CrashAsync() => _logged.CrashAsync();

    /// <summary>SIGKILL to the process and its children, waiting (bounded) until it ended: no shutdown hooks, no released claims.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit(10_000);
    }

    /// <summary>SIGSTOP: the process stops where it is (a long GC pause, a stalled VM) and holds its claims and connections.</summary>
    public void Freeze() => _logged.Freeze();

    /// <summary>SIGCONT: a frozen process goes on from where it stopped, unaware of the time that passed.</summary>
    public void Thaw() => _logged.Thaw();

    /// <summary>Ends the process as <see cref="ServiceProcessOptions.OnDispose"/> says, then releases it and its log.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_options.OnDispose == ServiceDisposal.Kill && !HasExited)
        {
            Kill();
        }

        await _logged.DisposeAsync();
    }

    /// <summary>The last lines of the service's log (for error messages).</summary>
    public string Tail(int lines = 30) => _logged.Tail(lines);

    private async Task WaitUntilReadyAsync(CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(_options.ReadyDeadline);
        using var http = CreateClient();
        try
        {
            if (_options.Readiness == ServiceReadiness.StartedLogLine)
            {
                // Event-driven: the host logs "Application started" once Kestrel listens and every hosted service (store
                // bootstrap, wake-up listener, signal workers) has started; then one readiness request confirms the store.
                await Task.WhenAny(_logged.Up, _process.WaitForExitAsync(deadline.Token)).Unwrap().WaitAsync(deadline.Token);
                ThrowIfExited();
                using var response = await http.GetAsync("/health/ready", deadline.Token);
                if (!response.IsSuccessStatusCode)
                {
                    throw new InvalidOperationException($"the service started but /health/ready answered {(int)response.StatusCode}:\n{Tail()}");
                }

                return;
            }

            // Without the lifetime log line (the caller's logging settings are under test): ask /health/ready until it answers.
            while (true)
            {
                ThrowIfExited();
                try
                {
                    using var response = await http.GetAsync("/health/ready", deadline.Token);
                    if (response.IsSuccessStatusCode)
                    {
                        return;
                    }
                }
                catch (HttpRequestException)
                {
                    // Not listening yet.
                }

                await Task.Delay(TimeSpan.FromMilliseconds(50), deadline.Token);
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"the service at {Address} was not ready within {_options.ReadyDeadline}:\n{Tail()}");
        }
    }

    private void ThrowIfExited()
    {
        if (_process.HasExited)
        {
            throw new InvalidOperationException($"the service exited with {_process.ExitCode} during start-up:\n{Tail()}");
        }
    }
}

/// <summary>How a <see cref="ServiceProcess"/> is started, awaited and ended.</summary>
public sealed record ServiceProcessOptions
{
    /// <summary>The WorkflowService.dll to run.</summary>
    public required string ServiceDll { get; init; }

    /// <summary>Where the process runs (its content root, where it finds appsettings.json).</summary>
    public required string WorkingDirectory { get; init; }

    /// <summary>Where its log goes; <see cref="WorkingDirectory"/> by default.</summary>
    public string? LogDirectory { get; init; }

    /// <summary>Settings for the process, as configuration keys (':' or '__'); applied after the defaults.</summary>
    public IReadOnlyDictionary<string, string?> Environment { get; init; } = new Dictionary<string, string?>();

    public ListenAddress Listen { get; init; } = ListenAddress.AspNetCoreUrls;

    /// <summary>The key readiness probes and <see cref="ServiceProcess.CreateClient"/> send in X-Api-Key (null: none).</summary>
    public string? ApiKey { get; init; }

    public ServiceReadiness Readiness { get; init; } = ServiceReadiness.StartedLogLine;

    public TimeSpan ReadyDeadline { get; init; } = TimeSpan.FromSeconds(90);

    public ServiceDisposal OnDispose { get; init; } = ServiceDisposal.Stop;
}

/// <summary>How a <see cref="ServiceProcess"/> is told where to listen: the standard ways of any ASP.NET Core service.</summary>
public enum ListenAddress
{
    /// <summary>ASPNETCORE_URLS=http://127.0.0.1:port.</summary>
    AspNetCoreUrls,

    /// <summary>ASPNETCORE_URLS and the Urls setting (which older builds set in appsettings.json, outranking ASPNETCORE_URLS).</summary>
    AspNetCoreUrlsAndUrlsSetting,

    /// <summary>ASPNETCORE_HTTP_PORTS=port (every interface).</summary>
    AspNetCoreHttpPorts,

    /// <summary>The command line: --urls http://127.0.0.1:port.</summary>
    UrlsArgument,
}

/// <summary>How <see cref="ServiceProcess.StartAsync"/> tells that the service is ready.</summary>
public enum ServiceReadiness
{
    /// <summary>The host's "Application started" log line, then one /health/ready (the lifetime log level is raised for it).</summary>
    StartedLogLine,

    /// <summary>/health/ready asked until it answers, logging settings left as the caller set them.</summary>
    PollHealth,
}

/// <summary>How <see cref="ServiceProcess.DisposeAsync"/> ends a process still running.</summary>
public enum ServiceDisposal
{
    /// <summary>As an orchestrator: SIGTERM, then SIGKILL after a deadline.</summary>
    Stop,

    /// <summary>SIGKILL at once (a test's node, nothing to drain).</summary>
    Kill,
}
