using System.Globalization;

namespace WorkflowService.Benchmarks.Cli;

/// <summary>The command line, parsed once.</summary>
internal sealed record RunnerOptions
{
    public const int FullTableGrowthSeed = 1_000_000;

    public const string Usage = """
        Usage (from the repository root):
          dotnet run -c Release --project tests/WorkflowService.Benchmarks -- --backend sqlite|postgres [--tier smoke|standard|all]
          dotnet run -c Release --project tests/WorkflowService.Benchmarks -- compare
          dotnet run -c Release --project tests/WorkflowService.Benchmarks -- readme

        run (the default command)   one backend's scenario set; writes docs/benchmarks/<backend>-<yyyy-MM-dd>[-<tier>].md/.json
        compare                     sqlite then postgres (tier all), then regenerates docs/benchmarks/README.md
        readme                      only regenerates docs/benchmarks/README.md from the latest reports

        Options:
          --backend sqlite|postgres         the backend (run)
          --tier smoke|standard|all         default all; smoke is the correctness check
          --only name[,name...]             run only these scenarios (names without the backend prefix)
          --table-growth-seed N             completed instances stored before signal-roundtrip-table-growth
                                            (default 1000000; a smaller seed is labelled in every report)
          --postgres "Host=...;Username=...;Password=..."
                                            admin connection string (default Host=127.0.0.1;Username=postgres;Password=postgres;SSL Mode=Disable,
                                            or $WORKFLOW_BENCH_POSTGRES); each run creates and drops its own database
          --output DIR                      where reports go (default docs/benchmarks)
          --no-build                        do not build the service (Release) before the run
          --keep-database                   do not drop the run's database / delete its SQLite file
        """;

    public required string Command { get; init; }
    public IReadOnlyList<string> Backends { get; init; } = [];
    public Tier Tier { get; init; } = Tier.All;
    public IReadOnlySet<string>? Only { get; init; }
    public int TableGrowthSeed { get; init; } = FullTableGrowthSeed;
    public required string PostgresAdmin { get; init; }
    public required string RepositoryRoot { get; init; }
    public required string OutputDirectory { get; init; }
    public bool Build { get; init; } = true;
    public bool KeepDatabase { get; init; }

    public string ServiceDll => Path.Combine(RepositoryRoot, "src", "WorkflowService", "bin", "Release", "net10.0", "WorkflowService.dll");

    /// <summary>The report file name's suffix: none for a full run, the tier or "partial" otherwise.</summary>
    public string ReportSuffix => Only is not null ? "-partial" : Tier == Tier.All ? string.Empty : "-" + Tier.ToString().ToLowerInvariant();

    public static RunnerOptions Parse(string[] args)
    {
        var root = FindRepositoryRoot();
        var positional = args.Length > 0 && !args[0].StartsWith("--", StringComparison.Ordinal) ? args[0] : "run";
        string? Value(string name)
        {
            var i = Array.IndexOf(args, name);
            if (i < 0)
            {
                return null;
            }

            return i + 1 < args.Length ? args[i + 1] : throw new ArgumentException($"{name} needs a value");
        }

        var backend = Value("--backend");
        var backends = positional switch
        {
            "compare" => new[] { "sqlite", "postgres" },
            "run" => backend is null ? throw new ArgumentException("--backend sqlite|postgres is required") : [Normalise(backend)],
            "readme" => [],
            _ => throw new ArgumentException($"unknown command '{positional}'"),
        };

        var tier = Value("--tier") is { } t
            ? Enum.TryParse<Tier>(t, ignoreCase: true, out var parsed) ? parsed : throw new ArgumentException($"--tier '{t}': use smoke, standard or all")
            : Tier.All;
        if (positional == "compare" && tier != Tier.All)
        {
            throw new ArgumentException("compare always runs tier all");
        }

        var seed = Value("--table-growth-seed") is { } s ? int.Parse(s, CultureInfo.InvariantCulture) : FullTableGrowthSeed;
        if (seed is < 0 or > 100_000_000)
        {
            throw new ArgumentException("--table-growth-seed must be between 0 and 100000000");
        }

        return new RunnerOptions
        {
            Command = positional,
            Backends = backends,
            Tier = tier,
            Only = Value("--only") is { } only ? only.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).ToHashSet() : null,
            TableGrowthSeed = seed,
            PostgresAdmin = Value("--postgres") ?? Environment.GetEnvironmentVariable("WORKFLOW_BENCH_POSTGRES")
                // Loopback to a server on this machine: no TLS, as between containers of one compose project. The report
                // records the connection's SSL mode; pass --postgres with "SSL Mode=Require" to measure with TLS.
                ?? "Host=127.0.0.1;Username=postgres;Password=postgres;SSL Mode=Disable",
            RepositoryRoot = root,
            OutputDirectory = Path.GetFullPath(Value("--output") ?? Path.Combine(root, "docs", "benchmarks")),
            Build = !args.Contains("--no-build"),
            KeepDatabase = args.Contains("--keep-database"),
        };
    }

    private static string Normalise(string backend) => backend.ToLowerInvariant() switch
    {
        "sqlite" => "sqlite",
        "postgres" or "postgresql" => "postgres",
        _ => throw new ArgumentException($"--backend '{backend}': use sqlite or postgres"),
    };

    private static string FindRepositoryRoot()
    {
        foreach (var start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                if (File.Exists(Path.Combine(dir.FullName, "WorkflowService.slnx")))
                {
                    return dir.FullName;
                }
            }
        }

        throw new InvalidOperationException("run from inside the repository: WorkflowService.slnx was not found above the current directory");
    }
}
