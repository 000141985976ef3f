using System.Globalization;
using WorkflowService.Testing.RebusPeer;

namespace WorkflowService.LoadRunner.Peers;

/// <summary>
/// The Rebus settings of the peer-rebus scenarios: the saga process's and the load client's endpoint's workers,
/// parallelism and idle backoff. The defaults are the best setting found on this machine
/// (docs/benchmarks/peer-rebus-2026-11-26.md); the environment overrides each, to try others:
/// WORKFLOW_BENCH_REBUS_WORKERS, _PARALLELISM, _BACKOFF_MS ("1,10,100": one wait per second of idleness, empty for Rebus's
/// own), and WORKFLOW_BENCH_REBUS_CLIENT_WORKERS, _CLIENT_PARALLELISM, _CLIENT_BACKOFF_MS for the client's endpoint.
/// </summary>
internal sealed record RebusPeerSettings
{
    // Tried on 2026-11-26 (peer-rebus-sustained, 10,000 ops at c64): saga parallelism 5, 8, 16, 19 (16 best; 19 no
    // better, as the transport lets 20 receives run at once), 2 workers (no better: one worker thread keeps 16 receives in
    // flight), client parallelism 4, 8, 16 (8 best), and the idle backoff: Rebus's own waits cost more than three quarters
    // of the throughput (every reply found its receiver asleep), a first wait of 10 ms instead of 1 ms about 5 %. The
    // waits after the first seconds of idleness only decide what an idle endpoint polls: 1 s after 3 s.
    public const int BestWorkers = 1;
    public const int BestParallelism = 16;
    public const string BestBackoffMs = "1,10,100,1000";
    public const int BestClientWorkers = 1;
    public const int BestClientParallelism = 8;
    public const string BestClientBackoffMs = "1,10,100,1000";

    public int Workers { get; init; } = BestWorkers;
    public int Parallelism { get; init; } = BestParallelism;
    public IReadOnlyList<TimeSpan> Backoff { get; init; } = PeerSettings.ParseBackoff(BestBackoffMs);
    public int ClientWorkers { get; init; } = BestClientWorkers;
    public int ClientParallelism { get; init; } = BestClientParallelism;
    public IReadOnlyList<TimeSpan> ClientBackoff { get; init; } = PeerSettings.ParseBackoff(BestClientBackoffMs);

    /// <summary>Whether the environment changed any setting from the best one found.</summary>
    public bool Overridden { get; init; }

    public static RebusPeerSettings FromEnvironment()
    {
        var overridden = false;
        string? Value(string name)
        {
            var value = Environment.GetEnvironmentVariable("WORKFLOW_BENCH_REBUS_" + name);
            overridden |= value is not null;
            return value;
        }

        int Number(string name, int fallback) => Value(name) is { } text ? int.Parse(text, CultureInfo.InvariantCulture) : fallback;

        var settings = new RebusPeerSettings
        {
            Workers = Number("WORKERS", BestWorkers),
            Parallelism = Number("PARALLELISM", BestParallelism),
            Backoff = PeerSettings.ParseBackoff(Value("BACKOFF_MS") ?? BestBackoffMs),
            ClientWorkers = Number("CLIENT_WORKERS", BestClientWorkers),
            ClientParallelism = Number("CLIENT_PARALLELISM", BestClientParallelism),
            ClientBackoff = PeerSettings.ParseBackoff(Value("CLIENT_BACKOFF_MS") ?? BestClientBackoffMs),
        };
        return settings with { Overridden = overridden };
    }

    /// <summary>The peer process's command-line settings (the connection and names come from the session).</summary>
    public IReadOnlyList<string> PeerArguments =>
    [
        "--workers", Workers.ToString(CultureInfo.InvariantCulture),
        "--parallelism", Parallelism.ToString(CultureInfo.InvariantCulture),
        "--backoff-ms", Backoff.Count == 0 ? string.Empty : PeerSettings.Describe(Backoff),
    ];

    public override string ToString() => string.Create(CultureInfo.InvariantCulture,
        $"saga process: workers {Workers}, max parallelism {Parallelism}, idle backoff ms {PeerSettings.Describe(Backoff)}; load client's endpoint: workers {ClientWorkers}, max parallelism {ClientParallelism}, idle backoff ms {PeerSettings.Describe(ClientBackoff)}{(Overridden ? " (set by WORKFLOW_BENCH_REBUS_*)" : " (the best setting found)")}");
}
