using WorkflowService.Benchmarks.Backends;
using WorkflowService.Benchmarks.Client;
using WorkflowService.Benchmarks.Cli;

namespace WorkflowService.Benchmarks.Scenarios;

/// <summary>What a scenario may use while it runs.</summary>
internal sealed class ScenarioContext
{
    private WorkflowClient? _client;
    private WorkflowClient? _front;

    public required Backend Backend { get; init; }
    public required RunnerOptions Options { get; init; }
    public required ProgressMeter Progress { get; init; }
    public required CancellationToken Cancellation { get; init; }

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
