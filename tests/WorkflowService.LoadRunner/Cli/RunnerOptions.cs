using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Cli;

/// <summary>What one invocation asks for, as <see cref="RunnerCommandLine"/> parsed it.</summary>
internal sealed record RunnerOptions
{
    public const int FullTableGrowthSeed = 1_000_000;

    /// <summary>run, compare or readme.</summary>
    public required string Command { get; init; }
    public IReadOnlyList<string> Backends { get; init; } = [];
    public Tier Tier { get; init; } = Tier.All;
    public IReadOnlySet<string>? Only { get; init; }
    public int TableGrowthSeed { get; init; } = FullTableGrowthSeed;
    public required string PostgresAdmin { get; init; }

    /// <summary>
    /// interleave's sync-standby variant: the admin connection string of a PostgreSQL primary whose commits wait for a
    /// synchronous standby (--sync-standby-postgres); null when the run names no such server.
    /// </summary>
    public string? SyncStandbyPostgresAdmin { get; init; }

    /// <summary>The MongoDB replica set (--mongodb, else $WORKFLOW_TESTS_MONGODB); null where neither names one.</summary>
    public string? MongoDb { get; init; }
    public required string RepositoryRoot { get; init; }
    public required string OutputDirectory { get; init; }
    public bool Build { get; init; } = true;
    public bool KeepDatabase { get; init; }

    /// <summary>apikey (default) or none (--auth).</summary>
    public AuthMode Auth { get; init; } = AuthMode.ApiKey;

    /// <summary>How reports name the mode: the --auth value.</summary>
    public string AuthName => Auth == AuthMode.None ? "none" : "apikey";

    /// <summary>Log every request as the shipped configuration does (--request-log); runs log only warnings otherwise.</summary>
    public bool RequestLog { get; init; }

    /// <summary>The wake-up transport (--transport): auto (the store's own: in-process on SQLite, LISTEN/NOTIFY on PostgreSQL) or redis.</summary>
    public string Transport { get; init; } = "auto";

    /// <summary>The Redis server for --transport redis (--redis, else $WORKFLOW_BENCH_REDIS); null: the runner starts its own redis-server.</summary>
    public string? Redis { get; init; }

    /// <summary>
    /// The service's telemetry (--telemetry): off (no exporter, as the service ships) or otlp (traces and metrics exported
    /// over OTLP/HTTP to a receiver the runner starts on this machine).
    /// </summary>
    public string Telemetry { get; init; } = "off";

    /// <summary>interleave: the variants compared (the first is the baseline), the rounds and each window's operations.</summary>
    public IReadOnlyList<string> Variants { get; init; } = ["off", "otlp"];
    public int Windows { get; init; } = 5;
    public int WindowOps { get; init; } = 3000;

    /// <summary>interleave: how many times each variant's service process is started again during the run (--restarts).</summary>
    public int Restarts { get; init; }

    /// <summary>interleave: the quiet after each window whose CPU counts in it (--settle).</summary>
    public TimeSpan Settle { get; init; } = TimeSpan.FromSeconds(6);

    /// <summary>interleave: the load every window runs (--scenario), one of <see cref="InterleavedRun.Loads"/>.</summary>
    /// <summary>events: workflows per latency run.</summary>
    public int EventLatencyWorkflows { get; init; } = 10_000;

    /// <summary>events: the backlog's size in events.</summary>
    public int EventBacklog { get; init; } = 100_000;

    /// <summary>search: instances seeded before the filters are timed.</summary>
    public int SearchInstances { get; init; } = 1_000_000;

    /// <summary>search: timed requests per filter and page.</summary>
    public int SearchRequests { get; init; } = 200;

    public string InterleaveScenario { get; init; } = SignalRoundtripScenario.Definition;

    /// <summary>schedules: how many schedules fire every minute, for how many measured minutes, and the spreads run.</summary>
    public int ScheduleCount { get; init; } = 1000;
    public int ScheduleMinutes { get; init; } = 3;
    public IReadOnlyList<string> ScheduleSpreads { get; init; } = [SchedulesBenchmark.OnTheMinute, SchedulesBenchmark.Staggered];

    /// <summary>foreach: instances, items per instance, and signals in flight.</summary>
    public int ForEachInstances { get; init; } = 20;
    public int ForEachItems { get; init; } = 100;
    public int ForEachConcurrency { get; init; } = 32;

    /// <summary>The embedded store's synchronous mode (--sqlite-synchronous): FULL, as the service ships, unless asked.</summary>
    public string SqliteSynchronous { get; init; } = SqliteBackend.DefaultSynchronous;

    /// <summary>
    /// Which service runs (--service): built (the Release build, compiled just in time) or shipped (the ReadyToRun publish
    /// the Dockerfile makes, with the runtime settings its ENV lines set). Reports of a shipped run get a -shipped suffix.
    /// </summary>
    public string Service { get; init; } = "built";

    public bool Shipped => Service == "shipped";

    public string ServiceDll => Shipped
        ? Path.Combine(RepositoryRoot, ServiceBuild.ReadyToRunDirectory, "WorkflowService.dll")
        : Path.Combine(RepositoryRoot, "src", "WorkflowService", "bin", "Release", "net10.0", "WorkflowService.dll");

    /// <summary>What a shipped run adds to every service process's environment: the image's runtime settings.</summary>
    public IReadOnlyDictionary<string, string> ServiceRuntimeSettings => Shipped
        ? ServiceBuild.ImageRuntimeSettings(RepositoryRoot)
        : new Dictionary<string, string>();

    /// <summary>The Rebus peer of the peer-rebus scenarios, built (Release) with this runner, which references it for its messages.</summary>
    public string RebusPeerDll => Path.Combine(RepositoryRoot, "tests", "WorkflowService.RebusPeer", "bin", "Release", "net10.0", "WorkflowService.RebusPeer.dll");

    /// <summary>
    /// The report file name's suffix: none for a full run, the tier or "partial" otherwise; "-noauth" after it for a run
    /// without authentication, "-redis" for one with Redis wake-ups, "-otlp" for one exporting telemetry, "-requestlog" for one that logs every request and "-sync-normal" (or -extra) for an embedded
    /// store run with another synchronous mode than the service's default, so that it never stands in for the day's report
    /// (the README reads only unsuffixed ones).
    /// </summary>
    public string ReportSuffix => (Only is not null ? "-partial" : Tier == Tier.All ? string.Empty : "-" + Tier.ToString().ToLowerInvariant())
                                  + (Shipped ? "-shipped" : string.Empty)
                                  + (Auth == AuthMode.None ? "-noauth" : string.Empty)
                                  + (RequestLog ? "-requestlog" : string.Empty)
                                  + (Transport == "auto" ? string.Empty : "-" + Transport)
                                  + (Telemetry == "off" ? string.Empty : "-" + Telemetry)
                                  + (SqliteSynchronous == SqliteBackend.DefaultSynchronous ? string.Empty : "-sync-" + SqliteSynchronous.ToLowerInvariant());

    /// <summary>The run's database on backend <paramref name="name"/> (sqlite, postgres or mongodb), with this run's settings.</summary>
    public Backend CreateBackend(string name) => name switch
    {
        "sqlite" => new SqliteBackend(KeepDatabase, SqliteSynchronous),
        "postgres" => new PostgresBackend(PostgresAdmin, KeepDatabase),
        "mongodb" => new MongoDbBackend(MongoDbBackend.RequireServer(MongoDb), KeepDatabase),
        _ => throw new ArgumentException($"unknown backend {name}"),
    };
}
