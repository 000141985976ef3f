using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// The service as a separate operating-system process (the built WorkflowService.dll under `dotnet`), configured by
/// environment variables like a deployed node, so that a test can run several nodes and kill one with SIGKILL.
/// </summary>
public sealed class ServiceProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string _log;

    private readonly TestApiKey _apiKey;

    private ServiceProcess(Process process, Uri address, string log, TestApiKey apiKey)
    {
        _apiKey = apiKey;
        _process = process;
        Address = address;
        _log = log;
    }

    public Uri Address { get; }

    /// <summary>The admin API key this node was started with, for clients other than <see cref="CreateClient"/> (sent as X-Api-Key).</summary>
    public string ApiKey => _apiKey.Key;

    public bool HasExited => _process.HasExited;

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

    private readonly List<string> _output = [];

    /// <param name="serviceDll">Another build of the service to run (a previous release); this checkout's build by default.</param>
    /// <param name="workingDirectory">Where the process runs (its content root, where it finds appsettings.json); a new
    /// temporary folder by default.</param>
    public static async Task<ServiceProcess> StartAsync(string nodeId, IReadOnlyDictionary<string, string?> settings,
        ListenAddress listen = ListenAddress.AspNetCoreUrls, string? serviceDll = null, string? workingDirectory = null)
    {
        var port = LoopbackPort.Free();
        var directory = Directory.CreateTempSubdirectory("workflow-node-").FullName;
        var log = Path.Combine(directory, "service.log");
        var start = new ProcessStartInfo("dotnet", [serviceDll ?? ServiceDll()])
        {
            WorkingDirectory = workingDirectory ?? directory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // The standard ways an ASP.NET Core service is told where to listen; only the chosen one is set.
        start.Environment.Remove("ASPNETCORE_URLS");
        start.Environment.Remove("ASPNETCORE_HTTP_PORTS");
        start.Environment.Remove("DOTNET_URLS");
        switch (listen)
        {
            case ListenAddress.AspNetCoreUrls:
                start.Environment["ASPNETCORE_URLS"] = $"http://127.0.0.1:{port}";
                break;
            case ListenAddress.AspNetCoreHttpPorts:
                start.Environment["ASPNETCORE_HTTP_PORTS"] = port.ToString(System.Globalization.CultureInfo.InvariantCulture);
                break;
            case ListenAddress.UrlsArgument:
                start.ArgumentList.Add("--urls");
                start.ArgumentList.Add($"http://127.0.0.1:{port}");
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(listen), listen, null);
        }

        start.Environment["Workers__NodeId"] = nodeId;
        start.Environment["Serilog__MinimumLevel__Default"] = "Warning";
        // A cluster test drives every node through one key, far above a caller's default rate.
        start.Environment["RateLimiting__PermitsPerPeriod"] = "1000000";
        start.Environment["RateLimiting__Burst"] = "10000000";
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        // Production refuses to start without authentication: the test's clients carry an admin key made for this node.
        var apiKey = TestApiKey.Create("test-client", "admin");
        foreach (var (key, value) in TestApiKey.Settings(apiKey).Concat(settings))
        {
            start.Environment[key.Replace(":", "__", StringComparison.Ordinal)] = value;
        }

        var process = Process.Start(start)!;
        var node = new ServiceProcess(process, new Uri($"http://127.0.0.1:{port}"), log, apiKey);
        var writer = new StreamWriter(log) { AutoFlush = true };
        var writing = new Lock();
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                return;
            }

            lock (writing) writer.WriteLine(e.Data);
            lock (node._output) node._output.Add(e.Data);
        };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (writing) writer.WriteLine(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        try
        {
            await node.WaitUntilReadyAsync(TimeSpan.FromSeconds(60));
        }
        catch
        {
            // A node that never became ready (a bad setting, a port taken between choosing and binding it) is not left
            // running behind the failed test.
            await node.DisposeAsync();
            throw;
        }

        return node;
    }

    /// <summary>
    /// Runs the service with <paramref name="settings"/> (and nothing else from this machine's configuration of where to
    /// listen) until it exits by itself, as a start with wrong settings does; the exit code and what it printed.
    /// </summary>
    public static Task<ToolRun> RunUntilExitAsync(IReadOnlyDictionary<string, string?> settings, params string[] arguments)
    {
        var environment = new Dictionary<string, string?>
        {
            ["DOTNET_ENVIRONMENT"] = "Production",
            ["ASPNETCORE_URLS"] = "http://127.0.0.1:0",
        };
        foreach (var (key, value) in settings)
        {
            environment[key.Replace(":", "__", StringComparison.Ordinal)] = value;
        }

        return ExternalTools.RunAsync("dotnet", [ServiceDll(), .. arguments], Directory.CreateTempSubdirectory("workflow-start-").FullName,
            TimeSpan.FromSeconds(60), environment);
    }

    public HttpClient CreateClient()
    {
        var client = new HttpClient { BaseAddress = Address, Timeout = TimeSpan.FromSeconds(30) };
        client.DefaultRequestHeaders.Add("X-Api-Key", _apiKey.Key);
        return client;
    }

    /// <summary>SIGSTOP: the process keeps its connections and claims but does nothing until thawed or killed.</summary>
    public void Freeze() => Signal("STOP");

    /// <summary>SIGCONT: a frozen process runs on.</summary>
    public void Thaw() => Signal("CONT");

    private void Signal(string name)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", [$"-{name}", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])
        {
            UseShellExecute = false,
        })!;
        kill.WaitForExit(10_000);
    }

    /// <summary>SIGKILL: no shutdown hooks, no released claims, like a crashed machine.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit(10_000);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            Kill();
        }

        _process.Dispose();
        await Task.CompletedTask;
    }

    private async Task WaitUntilReadyAsync(TimeSpan deadline)
    {
        using var http = CreateClient();
        var until = DateTime.UtcNow + deadline;
        while (true)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"the service process exited with {_process.ExitCode}: {ReadLog()}");
            }

            try
            {
                using var response = await http.GetAsync("/health/ready");
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
                // Not listening yet.
            }

            if (DateTime.UtcNow > until)
            {
                throw new TimeoutException($"the service at {Address} was not ready within {deadline}: {ReadLog()}");
            }

            await Task.Delay(TimeSpan.FromMilliseconds(50));
        }
    }

    private string ReadLog()
    {
        try
        {
            using var stream = new FileStream(_log, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            return new StreamReader(stream).ReadToEnd();
        }
        catch (IOException)
        {
            return "(no log)";
        }
    }

    /// <summary>The service build that sits beside this test build (same configuration).</summary>
    private static string ServiceDll()
    {
        var testBin = new DirectoryInfo(AppContext.BaseDirectory);
        var configuration = testBin.Parent!.Name; // bin/<Configuration>/<tfm>
        var framework = testBin.Name;
        var root = testBin;
        while (root is not null && !File.Exists(Path.Combine(root.FullName, "WorkflowService.slnx")))
        {
            root = root.Parent;
        }

        var dll = Path.Combine(root?.FullName ?? throw new InvalidOperationException("repository root not found"),
            "src", "WorkflowService", "bin", configuration, framework, "WorkflowService.dll");
        return File.Exists(dll) ? dll : throw new FileNotFoundException("build the service first", dll);
    }
}

/// <summary>How a <see cref="ServiceProcess"/> is told where to listen: the standard ways of any ASP.NET Core service.</summary>
public enum ListenAddress
{
    /// <summary>ASPNETCORE_URLS=http://127.0.0.1:port.</summary>
    AspNetCoreUrls,

    /// <summary>ASPNETCORE_HTTP_PORTS=port (every interface).</summary>
    AspNetCoreHttpPorts,

    /// <summary>The command line: --urls http://127.0.0.1:port.</summary>
    UrlsArgument,
}
