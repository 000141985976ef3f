using WorkflowService.LoadRunner.Cli;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>What a scenario may use while it runs.</summary>
internal sealed class ScenarioContext
{
    private WorkflowClient? _client;
    private WorkflowClient? _front;
    private Func<string, IReadOnlyDictionary<string, string>, CancellationToken, Task<ServiceProcess>>? _startService;

    public required Backend Backend { get; init; }
    public required RunnerOptions Options { get; init; }
    public required ProgressMeter Progress { get; init; }
    public required CancellationToken Cancellation { get; init; }

    /// <summary>
    /// Starts a service process of the given build (the path of its WorkflowService.dll) with the run's settings (backend,
    /// authentication, transport) and <c>extra</c> over them, ready when it returns; the scenario stops it. For scenarios
    /// that run their own service processes (<see cref="Scenario.NeedsService"/> false, e.g. cold-start).
    /// </summary>
    public Func<string, IReadOnlyDictionary<string, string>, CancellationToken, Task<ServiceProcess>> StartService
    {
        get => _startService ?? throw new InvalidOperationException("this run starts no service processes for its scenarios");
        init => _startService = value;
    }

    /// <summary>The run's API key for the service's clients (null: the run's service has no authentication).</summary>
    public string? ApiKey { get; init; }

    /// <summary>The service's client; scenarios that run without the service (the ceiling) have none.</summary>
    public WorkflowClient Client
    {
        get => _client ?? throw new InvalidOperationException("this scenario runs without the service");
        init => _client = value;
    }

    /// <summary>The second, API-only node's client, for scenarios that ask for one (<see cref="Scenario.NeedsFrontNode"/>).</summary>
    public WorkflowClient Front
    {
        get => _front ?? throw new InvalidOperationException("this scenario runs without a front node");
        init => _front = value;
    }
}
