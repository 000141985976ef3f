using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>What a fault scenario may use while it runs: the run's fresh database, its API key, its options.</summary>
internal sealed class FaultContext
{
    /// <summary>Claims expire this soon in fault runs, so that a dead or frozen node's work is taken over within seconds.</summary>
    public static readonly TimeSpan LeaseDuration = TimeSpan.FromSeconds(3);

    /// <summary>The safety-net poll of fault runs (the service's default).</summary>
    public static readonly TimeSpan PollInterval = TimeSpan.FromSeconds(1);

    public required Backend Backend { get; init; }
    public required FaultOptions Options { get; init; }
    public required string WorkDirectory { get; init; }
    public required BenchApiKey ApiKey { get; init; }
    public required CancellationToken Cancellation { get; init; }

    /// <summary>The PostgreSQL server the row owns, for a scenario that stops or pauses it (<see cref="FaultScenario.OwnsDatabaseServer"/>); null on any other backend.</summary>
    public OwnedPostgresServer? Server { get; init; }

    /// <summary>The pg_auto_failover cluster the row runs on (<see cref="FaultScenario.FailoverCluster"/>); null for any other row.</summary>
    public OwnedAutoFailoverCluster? Cluster { get; init; }

    /// <summary>The small filesystem holding the row's embedded store (<see cref="FaultScenario.FillsItsDisk"/>).</summary>
    public SmallDisk? Disk { get; init; }

    /// <summary>The filesystem holding the row's embedded store that can turn read-only (<see cref="FaultScenario.TurnsItsDiskReadOnly"/>).</summary>
    public ReadOnlyDisk? ReadOnlyDisk { get; init; }

    public bool Short => Options.Tier == FaultTier.Short;

    /// <summary>Whether several nodes can share the backend (the embedded store is one node's file).</summary>
    public bool SeveralNodes => Backend.SharedByNodes;

    /// <summary>A seeded random source, so that a row is repeated with the same gaps and the same choice of victims.</summary>
    public Random Random { get; } = new(20261124);

    /// <summary>
    /// Nodes configured as a deployment would be, plus the fault run's short lease, the run's API key and a per-caller rate
    /// the load never reaches; <paramref name="settings"/> adds or replaces settings (Section__Key = value). With
    /// <paramref name="storeFaults"/>, the nodes run the fault host: the service with a store decorator that fails store
    /// calls as its FaultInjection settings say.
    /// </summary>
    public ServiceNodes CreateNodes(IReadOnlyDictionary<string, string>? settings = null, bool storeFaults = false)
    {
        var environment = new Dictionary<string, string>(Backend.ServiceEnvironment)
        {
            ["Workers__LeaseDuration"] = LeaseDuration.ToString("c", CultureInfo.InvariantCulture),
            ["Workers__PollInterval"] = PollInterval.ToString("c", CultureInfo.InvariantCulture),
            ["RateLimiting__PermitsPerPeriod"] = "1000000",
            ["RateLimiting__Burst"] = "10000000",
        };
        foreach (var (key, value) in ApiKey.ServiceEnvironment)
        {
            environment[key] = value;
        }

        foreach (var (key, value) in settings ?? new Dictionary<string, string>())
        {
            environment[key] = value;
        }

        return new ServiceNodes(storeFaults ? Options.FaultHostDll : Options.ServiceDll, environment, WorkDirectory, ApiKey.Key);
    }

    /// <summary>Publishes a definition file (relative to the repository root) through any node that is up.</summary>
    public async Task PublishAsync(ServiceNodes nodes, string file)
    {
        using var http = new HttpClient { BaseAddress = nodes.NextAddress(), Timeout = TimeSpan.FromSeconds(30) };
        http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, ApiKey.Key);
        var json = await File.ReadAllTextAsync(Path.Combine(Options.RepositoryRoot, file), Cancellation);
        using var response = await http.PostAsync("/definitions", new StringContent(json, System.Text.Encoding.UTF8, "application/json"), Cancellation);
        if (!response.IsSuccessStatusCode)
        {
            throw new ApiCallException($"POST /definitions ({file})", response.StatusCode, await response.Content.ReadAsStringAsync(Cancellation));
        }
    }
}
