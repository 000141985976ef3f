using WorkflowService.LoadRunner.Cli;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// One service node on a fresh database of the run's backend, with the run's API key and a per-caller rate the load never
/// reaches, and its client: what the <c>schedules</c> and <c>foreach</c> commands measure. Disposing stops the node and
/// drops the database.
/// </summary>
internal sealed class BenchNode : IAsyncDisposable
{
    private const int SignalWorkers = 8;

    private BenchNode(Backend backend) => Backend = backend;

    public Backend Backend { get; }

    public ServiceProcess? Service { get; private set; }

    public WorkflowClient Client { get; private set; } = null!;

    /// <summary>Starts the node with <paramref name="settings"/> over the run's and publishes <paramref name="definitionFiles"/> (repository paths).</summary>
    public static async Task<BenchNode> StartAsync(RunnerOptions options, string backendName, BenchApiKey apiKey, string work, int concurrency,
        IReadOnlyDictionary<string, string> settings, IReadOnlyList<string> definitionFiles, CancellationToken cancellationToken)
    {
        var node = new BenchNode(options.CreateBackend(backendName));
        try
        {
            await node.Backend.ProvisionAsync(work, cancellationToken);
            var environment = new Dictionary<string, string>(node.Backend.ServiceEnvironment)
            {
                ["RateLimiting__PermitsPerPeriod"] = "1000000",
                ["RateLimiting__Burst"] = "10000000",
                ["Workers__NodeId"] = "node-0",
            };
            foreach (var (key, value) in apiKey.ServiceEnvironment.Concat(settings))
            {
                environment[key] = value;
            }

            node.Service = await ServiceProcess.StartAsync(options.ServiceDll, environment, SignalWorkers, Path.Combine(work, "node-0"), apiKey.Key, cancellationToken);
            node.Client = new WorkflowClient(node.Service.Address, concurrency, apiKey.Key);
            foreach (var file in definitionFiles)
            {
                await node.Client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(options.RepositoryRoot, file), cancellationToken), cancellationToken);
            }

            return node;
        }
        catch
        {
            await node.DisposeAsync();
            throw;
        }
    }

    /// <summary>Stops the service (the database stays until disposal): its counters are then final.</summary>
    public async Task StopServiceAsync()
    {
        Client?.Dispose();
        if (Service is { } service)
        {
            await service.DisposeAsync();
            Service = null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopServiceAsync();
        await Backend.DisposeAsync();
    }
}
