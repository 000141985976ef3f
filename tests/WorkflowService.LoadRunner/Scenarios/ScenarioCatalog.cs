using WorkflowService.LoadRunner.Cli;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The scenario set of shared/BENCHMARKS.md, in run order: idle-polling (the "idle polling per node" target) on the fresh
/// database, the one-worker scenarios, the predecessor's set, then the ceiling (service stopped) and table growth (seeded first).
/// </summary>
internal static class ScenarioCatalog
{
    public const string Sustained = "signal-roundtrip-sustained";
    public const string TableGrowth = "signal-roundtrip-table-growth";
    public const string Ceiling = "ceiling";
    public const string CeilingPerWrite = "ceiling-per-write";
    public const string LatencySerial = "signal-roundtrip-latency-serial";
    public const string LatencySerial1K = "signal-roundtrip-latency-serial-1k";
    public const string ThroughputParallel = "signal-roundtrip-throughput-parallel";
    public const string IdlePolling = "idle-polling";
    public const string CrossNode = "cross-node-roundtrip-serial-1k";
    public const string ColdStart = "cold-start";
    public const string LargeDefinition = "large-definition";
    public const string LongInstance = "long-instance";
    public const string CallOutSustained = "callout-roundtrip-sustained";

    /// <summary>Names --only takes for every scenario whose name starts with it and a dash (peer-rebus: the Rebus peer's set).</summary>
    public static readonly string[] Families = [PeerRebusScenario.Family];

    public static readonly string[] CapacityLadder = ["signal-roundtrip-capacity-c1", "signal-roundtrip-capacity-c4", "signal-roundtrip-capacity-c8", "signal-roundtrip-capacity-c16"];

    public static IReadOnlyList<Scenario> Select(RunnerOptions options)
    {
        // --only names are checked against All when the command line is parsed.
        return All(options.TableGrowthSeed).Where(s => options.Only?.Any(name => Matches(name, s)) ?? options.Tier switch
        {
            Tier.Smoke => s.InSmokeTier,
            Tier.Standard => s.TierLabel is not ("Scaled" or "Ceiling" or PeerTier),
            _ => true,
        }).ToList();
    }

    /// <summary>Whether an --only name selects <paramref name="scenario"/>: its own name, or its family's.</summary>
    public static bool Matches(string name, Scenario scenario) =>
        scenario.Name == name || (Families.Contains(name) && scenario.Name.StartsWith(name + "-", StringComparison.Ordinal));

    /// <summary>The tier label of the peers' scenarios: like Scaled, only in --tier all or by --only.</summary>
    public const string PeerTier = "Peer";

    public static IReadOnlyList<Scenario> All(int tableGrowthSeed) =>
    [
        // Not the predecessor's: what a node costs the database while it has nothing to do (~35 s, so in smoke too). First,
        // on the fresh database: no earlier scenario has left work for PostgreSQL's autovacuum, which the server would count.
        new IdlePollingScenario { Name = IdlePolling, TierLabel = IdlePollingScenario.Tier, Ops = 0, Concurrency = 1 },

        // The single-instance latency pair runs with one signal worker.
        Roundtrip(LatencySerial, "Latency", 16, 1, workers: 1),
        Roundtrip(LatencySerial1K, "Scaled", 1000, 1, workers: 1),

        Roundtrip(ThroughputParallel, "Throughput", 96, 16),
        Roundtrip(CapacityLadder[0], "Capacity", 16, 1),
        Roundtrip(CapacityLadder[1], "Capacity", 64, 4),
        Roundtrip(CapacityLadder[2], "Capacity", 128, 8),
        Roundtrip(CapacityLadder[3], "Capacity", 256, 16),
        Roundtrip("signal-roundtrip-soak", "Soak", 108, 8),

        new BurstScenario { Name = "immediate-burst-smoke", TierLabel = "Smoke", Ops = 24, Concurrency = 1 },
        new BurstScenario { Name = "immediate-burst-nightly", TierLabel = "Nightly", Ops = 120, Concurrency = 1 },
        new BurstScenario { Name = "delayed-burst-smoke", TierLabel = "Smoke", Ops = 12, Concurrency = 1, Delay = TimeSpan.FromSeconds(2) },
        new BurstScenario { Name = "delayed-burst-nightly", TierLabel = "Nightly", Ops = 48, Concurrency = 1, Delay = TimeSpan.FromSeconds(2) },
        new ExternalResumeScenario { Name = "synthetic-external-resume-smoke", TierLabel = "Smoke", Ops = 12, Concurrency = 4 },
        new ExternalResumeScenario { Name = "synthetic-external-resume-nightly", TierLabel = "Nightly", Ops = 36, Concurrency = 8 },
        new QuoteOrCancelScenario { Name = "insurance-quote-or-cancel-smoke", TierLabel = "Smoke", Ops = 10, Concurrency = 4 },
        new QuotationToPolicyScenario { Name = "insurance-quotation-confirm-convert-to-policy-nightly", TierLabel = "Nightly", Ops = 12, Concurrency = 4 },
        // Publish, start and diagram of a 300- and a 1,000-step definition: one operation per size; not for smoke (it takes
        // tens of seconds with the warm-up).
        new LargeDefinitionScenario { Name = LargeDefinition, TierLabel = "Scaled", Ops = 2, Concurrency = 1, Sizes = [300, 1000] },


        // Two nodes: the wake-up transport carries the signal to the workers and the completion to the long-poll.
        new CrossNodeRoundtripScenario { Name = CrossNode, TierLabel = "Transport", Ops = 1000, Concurrency = 1 },

        Roundtrip(Sustained, "Scaled", 10_000, 64),
        // The sustained load with one http call-out per workflow instead of a signal, to an endpoint in the runner.
        new CallOutRoundtripScenario { Name = CallOutSustained, TierLabel = "Scaled", Ops = 10_000, Concurrency = 64 },
        // The ceiling with the store's own batching (group commit, the service's claim), and the loop of one transaction
        // per write beside it: what sharing commits is worth on this machine.
        new GroupedCeilingScenario { Name = Ceiling, TierLabel = "Ceiling", Ops = 10_000, Concurrency = 64 },
        new CeilingScenario { Name = CeilingPerWrite, TierLabel = "Ceiling", Ops = 10_000, Concurrency = 64 },
        // Fresh processes of each build under the sustained load from their first second (several minutes: Scaled only).
        new ColdStartScenario { Name = ColdStart, TierLabel = "Scaled", Ops = 10_000, Concurrency = 64 },
        // Ticks to one instance and to many, their cost as each instance's own history grows (a few minutes: Scaled only).
        new LongInstanceScenario
        {
            Name = LongInstance, TierLabel = "Scaled", Concurrency = 64,
            Ops = LongInstanceScenario.SingleLoops + LongInstanceScenario.ManyInstances * LongInstanceScenario.ManyLoops,
        },
        // The Rebus peer on the same database and machine, our service stopped: the two shapes above, then its idle cost.
        new PeerRebusScenario { Name = PeerRebusScenario.Family + "-serial-1k", TierLabel = PeerTier, Ops = 1000, Concurrency = 1 },
        new PeerRebusScenario { Name = PeerRebusScenario.Family + "-sustained", TierLabel = PeerTier, Ops = 10_000, Concurrency = 64 },
        new PeerRebusScenario { Name = PeerRebusScenario.Family + "-idle", TierLabel = PeerTier, Ops = 0, Concurrency = 1, Idle = true },
        // The stored history as a deployment keeps it: retention on, deleting the seeded instances (ended 30+ days ago) in the
        // background while the load runs.
        new SignalRoundtripScenario
        {
            Name = TableGrowth, TierLabel = "Scaled", Ops = 10_000, Concurrency = 64, SeedCompletedInstances = tableGrowthSeed,
            RetentionPeriod = TimeSpan.FromDays(7),
        },
    ];

    private static SignalRoundtripScenario Roundtrip(string name, string tier, int ops, int concurrency, int workers = 8) =>
        new() { Name = name, TierLabel = tier, Ops = ops, Concurrency = concurrency, SignalWorkers = workers };
}
