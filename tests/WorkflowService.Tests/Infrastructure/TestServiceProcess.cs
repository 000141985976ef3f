using WorkflowService.Testing.Processes;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// The integration tests' way to run the service as a separate process (<see cref="ServiceProcess"/>), so that a test can
/// run several nodes and kill one with SIGKILL: an admin key made for the node, rate limits out of the way, readiness
/// asked of /health/ready (a test's logging settings stay as it set them), SIGKILL on dispose.
/// </summary>
public static class TestServiceProcess
{
    /// <param name="serviceDll">Another build of the service to run (a previous release); this checkout's build by default.</param>
    /// <param name="workingDirectory">Where the process runs (its content root, where it finds appsettings.json); a new
    /// temporary folder by default.</param>
    public static Task<ServiceProcess> StartAsync(string nodeId, IReadOnlyDictionary<string, string?> settings,
        ListenAddress listen = ListenAddress.AspNetCoreUrls, string? serviceDll = null, string? workingDirectory = null)
    {
        var directory = Directory.CreateTempSubdirectory("workflow-node-").FullName;
        // Production refuses to start without authentication: the test's clients carry an admin key made for this node.
        var apiKey = TestApiKey.Create("test-client", "admin");
        var environment = new Dictionary<string, string?>
        {
            ["Workers:NodeId"] = nodeId,
            // A cluster test drives every node through one key, far above a caller's default rate.
            ["RateLimiting:PermitsPerPeriod"] = "1000000",
            ["RateLimiting:Burst"] = "10000000",
        };
        foreach (var (key, value) in TestApiKey.Settings(apiKey).Concat(settings))
        {
            environment[key] = value;
        }

        return ServiceProcess.StartAsync(new ServiceProcessOptions
        {
            ServiceDll = serviceDll ?? ServiceDll(),
            WorkingDirectory = workingDirectory ?? directory,
            LogDirectory = directory,
            Environment = environment,
            Listen = listen,
            ApiKey = apiKey.Key,
            Readiness = ServiceReadiness.PollHealth,
            ReadyDeadline = TimeSpan.FromSeconds(60),
            OnDispose = ServiceDisposal.Kill,
        });
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
