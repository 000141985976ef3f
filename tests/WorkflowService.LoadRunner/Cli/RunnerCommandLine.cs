using System.CommandLine;
using System.Globalization;
using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Cli;

/// <summary>
/// The load runner's command line, on System.CommandLine: <c>run</c> is the root command (one backend), <c>compare</c>,
/// <c>readme</c> and <c>interleave</c> are subcommands; the benchmark program adds the fault runner's.
/// </summary>
internal static class RunnerCommandLine
{
    /// <summary>The root command (a run) with its subcommands, each running <paramref name="execute"/> with the options it parsed.</summary>
    public static RootCommand Create(SharedCommandOptions shared, Func<RunnerOptions, Task<int>> execute)
    {
        var postgres = shared.Postgres;
        var mongodb = shared.MongoDb;
        var noBuild = shared.NoBuild;
        var backend = new Option<string>("--backend") { Description = "The backend to run on.", Required = true }
            .AcceptOnlyFromAmong("sqlite", "postgres", "postgresql", "mongodb");
        var tier = new Option<string>("--tier")
        {
            Description = "smoke is the correctness check (non-zero exit on any failure, dead letter or stuck instance).",
            DefaultValueFactory = _ => "all",
        }.AcceptOnlyFromAmong("smoke", "standard", "all");
        var only = new Option<string>("--only") { Description = "Run only these scenarios (name[,name...], without the backend prefix; peer-rebus for all of the Rebus peer's).", HelpName = "names" };
        var known = ScenarioCatalog.All(0).Select(s => s.Name).Concat(ScenarioCatalog.Families).ToList();
        only.Validators.Add(result =>
        {
            var unknown = SharedCommandOptions.Names(result.GetValueOrDefault<string>())?.Where(n => !known.Contains(n)).ToList();
            if (unknown is { Count: > 0 })
            {
                result.AddError($"--only: no scenario is named {string.Join(", ", unknown)}; known: {string.Join(", ", known)}");
            }
        });
        var seed = new Option<int>("--table-growth-seed")
        {
            Description = "Completed instances stored before signal-roundtrip-table-growth (a smaller seed is labelled in every report).",
            DefaultValueFactory = _ => RunnerOptions.FullTableGrowthSeed,
            HelpName = "N",
            CustomParser = result =>
            {
                if (!int.TryParse(result.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out var n) || n > 100_000_000)
                {
                    result.AddError($"--table-growth-seed '{result.Tokens[0].Value}': use a whole number from 0 to 100000000");
                }

                return n;
            },
        };
        var withMongoDb = new Option<bool>("--with-mongodb")
        {
            Description = "compare: run mongodb too, after sqlite and postgres (on --mongodb, else $" + MongoDbBackend.ServerVariable + ").",
        };
        var output = new Option<string>("--output") { Description = "Where reports go (default docs/benchmarks).", HelpName = "DIR" };
        var keepDatabase = new Option<bool>("--keep-database") { Description = "Do not drop the run's database / delete its SQLite file." };
        var auth = new Option<string>("--auth")
        {
            Description = "apikey: a random API key per run (role admin), its hash given to the service, the key sent in X-Api-Key on every request. none: the service runs with Authentication__Mode=None and no key is sent (to measure what authentication costs; reports get a -noauth suffix).",
            DefaultValueFactory = _ => "apikey",
        }.AcceptOnlyFromAmong("apikey", "none");
        var requestLog = new Option<bool>("--request-log")
        {
            Description = "Log every request as the shipped appsettings.json does (one Information line each); runs otherwise log warnings only. Measures what request logging costs; reports get a -requestlog suffix.",
        };

        var service = new Option<string>("--service")
        {
            Description = "built: the service's Release build, compiled just in time (default). shipped: the ReadyToRun publish the Dockerfile makes, run with the runtime settings of the Dockerfile's ENV DOTNET_ lines: what the image runs (reports get a -shipped suffix).",
            DefaultValueFactory = _ => "built",
        }.AcceptOnlyFromAmong("built", "shipped");

        var sqliteSynchronous = new Option<string>("--sqlite-synchronous")
        {
            Description = "The embedded store's synchronous mode: full (the service's default: every acknowledged commit on the disk), normal (flushed at checkpoints only) or extra. To measure what durability costs; reports of a mode other than full get a -sync-<mode> suffix.",
            DefaultValueFactory = _ => "full",
        }.AcceptOnlyFromAmong("full", "normal", "extra");

        var transport = new Option<string>("--transport")
        {
            Description = "The wake-up transport: auto (the store's own: in-process on SQLite, LISTEN/NOTIFY on PostgreSQL) or redis (Redis pub/sub; reports get a -redis suffix).",
            DefaultValueFactory = _ => "auto",
        }.AcceptOnlyFromAmong("auto", "redis");
        var telemetry = new Option<string>("--telemetry")
        {
            Description = "The service's telemetry: off (no exporter, as the service ships) or otlp (traces, metrics and logs over OTLP/HTTP to a receiver the runner starts on this machine, every request traced; reports get a -otlp suffix).",
            DefaultValueFactory = _ => "off",
        }.AcceptOnlyFromAmong("off", "otlp");
        var redis = new Option<string>("--redis")
        {
            Description = "With --transport redis: the Redis server (a StackExchange.Redis configuration string; default $WORKFLOW_BENCH_REDIS, else a redis-server the runner starts on a free port).",
            HelpName = "configuration",
        };

        redis.Validators.Add(result =>
        {
            if (result.Parent?.GetValue(transport) != "redis")
            {
                result.AddError("--redis names the Redis server of --transport redis; add --transport redis, or leave --redis out");
            }
        });

        var run = new RootCommand("The benchmark runner: starts the service (Release) on a fresh database, drives the scenario set over HTTP and writes docs/benchmarks/<backend>-<yyyy-MM-dd>[-<tier>].md/.json.")
        {
            backend, tier, only, seed, postgres, mongodb, output, noBuild, keepDatabase, auth, requestLog, sqliteSynchronous, transport, redis, telemetry, service,
        };
        var compare = new Command("compare", "sqlite then postgres (then mongodb with --with-mongodb) (tier all), then regenerates comparison.md in the output directory.")
        {
            only, seed, postgres, mongodb, withMongoDb, output, noBuild, keepDatabase, auth, requestLog, sqliteSynchronous, transport, redis, telemetry, service,
        };
        var variants = new Option<string>("--variants")
        {
            Description = $"interleave: the service variants to compare, the first the baseline (of {string.Join(", ", InterleavedRun.Known.Keys)}, or at-REV: the service built from commit REV; events-at-REV and search-attributes-at-REV: built from REV, loaded as events and search-attributes are).",
            DefaultValueFactory = _ => "off,otlp",
            HelpName = "names",
        };
        variants.Validators.Add(result =>
        {
            var names = SharedCommandOptions.Names(result.GetValueOrDefault<string>()) ?? [];
            var unknown = names.Where(n => !InterleavedRun.IsKnown(n)).ToList();
            if (unknown.Count > 0 || names.Length < 2 || names.Distinct(StringComparer.Ordinal).Count() != names.Length)
            {
                result.AddError($"--variants: two or more distinct names of {string.Join(", ", InterleavedRun.Known.Keys)}, or at-REV (the service built from commit REV), events-at-REV or search-attributes-at-REV");
            }
        });
        var windows = new Option<int>("--windows") { Description = "interleave: rounds (each variant loaded once per round).", DefaultValueFactory = _ => 5 };
        windows.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 3 or > 200)
            {
                result.AddError("--windows: 3 to 200 rounds");
            }
        });
        var windowOps = new Option<int>("--window-ops") { Description = "interleave: operations per window.", DefaultValueFactory = _ => 3000 };
        windowOps.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 500 or > 100_000)
            {
                result.AddError("--window-ops: 500 to 100,000 operations");
            }
        });
        var restarts = new Option<int>("--restarts")
        {
            Description = "interleave: how many times every variant's service process is started again (on its database, warmed up again) during the run, at evenly spaced rounds: a process's own luck (its JIT's choices, where its memory lies) then no longer becomes its variant's difference.",
            DefaultValueFactory = _ => 0,
        };
        var settle = new Option<double>("--settle")
        {
            Description = "interleave: seconds of quiet after each window whose CPU still counts in it (work the window deferred). Keep the default, longer than the span exporter's 5 s batches, for telemetry variants; 1 s lets more, tighter rounds fit in the same time when no variant defers work for long.",
            DefaultValueFactory = _ => 6,
        };
        settle.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<double>() is < 0.5 or > 60)
            {
                result.AddError("--settle: 0.5 to 60 seconds");
            }
        });
        var load = new Option<string>("--scenario")
        {
            Description = "interleave: the load of every window: signal-roundtrip (start, signal, completion) or callout-roundtrip (start, one http call-out to an endpoint in the runner, completion; reports get a -callout-roundtrip suffix).",
            DefaultValueFactory = _ => SignalRoundtripScenario.Definition,
        }.AcceptOnlyFromAmong([.. InterleavedRun.Loads.Keys]);
        var syncStandby = new Option<string?>("--sync-standby-postgres")
        {
            Description = "interleave: the admin connection string of a PostgreSQL primary with a synchronous standby; the sync-standby variant makes its database there.",
        };
        var interleave = new Command("interleave", "Service variants (telemetry settings) side by side, each its own process on its own database of the same server, loaded in turns (A B, B A, …) with signal-roundtrip (or --scenario) at concurrency 64; writes <output>/interleaved-<backend>-<date>-<variants>[-<scenario>].md/.json.")
        {
            backend, postgres, output, noBuild, variants, windows, windowOps, restarts, settle, load, syncStandby,
        };
        var latencyWorkflows = new Option<int>("--latency-workflows") { Description = "events: workflows per latency run (two events each).", DefaultValueFactory = _ => 10_000 };
        latencyWorkflows.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 100 or > 1_000_000)
            {
                result.AddError("--latency-workflows: 100 to 1,000,000 workflows");
            }
        });
        var backlog = new Option<int>("--backlog") { Description = "events: the backlog's size in events (two per workflow).", DefaultValueFactory = _ => 100_000 };
        backlog.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 1_000 or > 10_000_000)
            {
                result.AddError("--backlog: 1,000 to 10,000,000 events");
            }
        });
        var events = new Command("events", "Events out: commit-to-receiver latency on one node and on three, then the delivery rate from a paused subscription's backlog, to a webhook receiver in the runner; writes <output>/events-<backend>-<date>.md/.json.")
        {
            backend, postgres, output, noBuild, latencyWorkflows, backlog,
        };
        var scheduleCount = Bounded("--schedules", "schedules: how many schedules fire every minute.", 1000, 1, 100_000, "schedules");
        var minutes = Bounded("--minutes", "schedules: the measured minutes of each spread (after one to warm up).", 3, 1, 60, "minutes");
        var spread = new Option<string>("--spread")
        {
            Description = $"schedules: {SchedulesBenchmark.OnTheMinute} (every schedule due at once: the hard case), {SchedulesBenchmark.Staggered} (spread over the minute's seconds) or both, each on a fresh node.",
            DefaultValueFactory = _ => "both",
        }.AcceptOnlyFromAmong(SchedulesBenchmark.OnTheMinute, SchedulesBenchmark.Staggered, "both");
        var schedules = new Command("schedules", "Schedules firing every minute on one node (fire delay p50/p99 from the store, occurrences/s), then the signal round trip addressed by business key against by id in alternating windows; writes <output>/schedules-<backend>-<date>.md/.json.")
        {
            backend, postgres, output, noBuild, scheduleCount, minutes, spread, windows, windowOps,
        };
        var forEachInstances = Bounded("--instances", "foreach: instances started, each with a forEach over --items items.", 20, 1, 10_000, "instances");
        var forEachItems = Bounded("--items", "foreach: items per instance, each waiting for its own signal (at most the service's Engine:MaxForEachItems).", 100, 1, 1000, "items");
        var forEachConcurrency = Bounded("--signal-concurrency", "foreach: signals in flight at once.", 32, 1, 1024, "signals");
        var forEach = new Command("foreach", "A forEach whose items each wait for one signal: every item signalled, items/s, per-item latency p99 and commits per item from the store; writes <output>/foreach-<backend>-<date>.md/.json.")
        {
            backend, postgres, output, noBuild, forEachInstances, forEachItems, forEachConcurrency,
        };
        var instances = new Option<int>("--instances") { Description = "search: instances seeded before the filters are timed.", DefaultValueFactory = _ => 1_000_000 };
        instances.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 1_000 or > 100_000_000)
            {
                result.AddError("--instances: 1,000 to 100,000,000 instances");
            }
        });
        var requests = new Option<int>("--requests") { Description = "search: timed requests per filter and page, after a warm-up.", DefaultValueFactory = _ => 200 };
        requests.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() is < 10 or > 100_000)
            {
                result.AddError("--requests: 10 to 100,000 requests");
            }
        });
        var search = new Command("search", "Search over many instances: three search attributes, --instances seeded in the store, three filters and the counts by region timed through GET /instances, with each filter's plan; writes <output>/search-<backend>-<date>.md/.json.")
        {
            backend, postgres, output, noBuild, instances, requests,
        };
        var readme = new Command("readme", "Only regenerates comparison.md in the output directory from its latest reports.") { output };
        var poolVariant = new Option<string>("--variant") { Description = "pool: the variant compared.", Required = true };
        var poolBaseline = new Option<string>("--baseline") { Description = "pool: the variant it is compared with.", Required = true };
        var poolReports = new Argument<string[]>("reports")
        {
            Description = "pool: interleave reports (their .json) of the same builds, to pool.",
            Arity = ArgumentArity.OneOrMore,
        };
        var pool = new Command("pool", "Pools interleave reports: --variant's paired ratio to --baseline over the rounds of every report, with the interval one report gives (processes resampled, then their rounds) and the median CPU and WAL differences; prints a Markdown table. Runs nothing.")
        {
            poolVariant, poolBaseline, poolReports,
        };
        run.Subcommands.Add(compare);
        run.Subcommands.Add(readme);
        run.Subcommands.Add(pool);
        run.Subcommands.Add(interleave);
        run.Subcommands.Add(events);
        run.Subcommands.Add(schedules);
        run.Subcommands.Add(forEach);
        run.Subcommands.Add(search);

        RunnerOptions Options(ParseResult parse, string command, IReadOnlyList<string> backends)
        {
            var root = RepositoryRoot.Find();
            // The commands that measure one thing take the run's defaults for every setting they have no option for.
            var single = command is "readme" or "interleave" or "events" or "schedules" or "foreach" or "search";
            return new RunnerOptions
            {
                Command = command,
                Backends = backends,
                Tier = command == "run" ? Enum.Parse<Tier>(parse.GetValue(tier)!, ignoreCase: true) : Tier.All,
                Only = single ? null : SharedCommandOptions.Names(parse.GetValue(only))?.ToHashSet(),
                TableGrowthSeed = single ? RunnerOptions.FullTableGrowthSeed : parse.GetValue(seed),
                PostgresAdmin = shared.PostgresAdmin(parse),
                MongoDb = shared.MongoDbServer(parse),
                RepositoryRoot = root,
                OutputDirectory = Path.GetFullPath(parse.GetValue(output) ?? Path.Combine(root, "docs", "benchmarks")),
                Build = shared.Build(parse),
                KeepDatabase = parse.GetValue(keepDatabase),
                Auth = !single && parse.GetValue(auth) == "none" ? AuthMode.None : AuthMode.ApiKey,
                RequestLog = !single && parse.GetValue(requestLog),
                Transport = single ? "auto" : parse.GetValue(transport)!,
                Redis = parse.GetValue(redis) ?? Environment.GetEnvironmentVariable("WORKFLOW_BENCH_REDIS"),
                Telemetry = single ? "off" : parse.GetValue(telemetry)!,
                Service = single ? "built" : parse.GetValue(service)!,
                SqliteSynchronous = single ? SqliteBackend.DefaultSynchronous : parse.GetValue(sqliteSynchronous)!.ToUpperInvariant(),
            };
        }

        run.SetAction(parse => SharedCommandOptions.WithServersAsync(Options(parse, "run", [BackendName(parse.GetValue(backend))]), o => o.Backends, o => o.MongoDb, execute));
        compare.SetAction(parse => SharedCommandOptions.WithServersAsync(Options(parse, "compare", parse.GetValue(withMongoDb) ? ["sqlite", "postgres", "mongodb"] : ["sqlite", "postgres"]),
            o => o.Backends, o => o.MongoDb, execute));
        readme.SetAction(parse => execute(Options(parse, "readme", [])));
        pool.SetAction(async parse =>
        {
            var (variant, baseline) = (parse.GetValue(poolVariant)!, parse.GetValue(poolBaseline)!);
            var texts = new List<string>();
            foreach (var report in parse.GetValue(poolReports)!)
            {
                if (!File.Exists(report))
                {
                    await Console.Error.WriteLineAsync($"pool: no report at {report}");
                    return SharedCommandOptions.UsageError;
                }

                texts.Add(await File.ReadAllTextAsync(report));
            }

            InterleavePool.Result? result;
            try
            {
                result = InterleavePool.Compute(variant, baseline, texts);
            }
            catch (Exception e) when (e is System.Text.Json.JsonException or FormatException or InvalidOperationException or KeyNotFoundException)
            {
                await Console.Error.WriteLineAsync($"pool: {e.Message}");
                return SharedCommandOptions.UsageError;
            }

            if (result is null)
            {
                await Console.Error.WriteLineAsync($"pool: no round of these reports has both {variant} and {baseline}");
                return SharedCommandOptions.UsageError;
            }

            await Console.Out.WriteAsync(InterleavePool.Markdown(variant, baseline, result));
            return 0;
        });
        interleave.SetAction(async parse =>
        {
            if (BackendName(parse.GetValue(backend)) == "mongodb")
            {
                // Its variants' database CPU and connection settings are the relational servers'.
                await Console.Error.WriteLineAsync("interleave runs on sqlite or postgres");
                return SharedCommandOptions.UsageError;
            }

            if (SharedCommandOptions.Names(parse.GetValue(variants))!.Contains("sync-standby")
                && (BackendName(parse.GetValue(backend)) != "postgres" || parse.GetValue(syncStandby) is null))
            {
                await Console.Error.WriteLineAsync("the sync-standby variant runs with --backend postgres and --sync-standby-postgres");
                return SharedCommandOptions.UsageError;
            }

            if (parse.GetValue(restarts) < 0 || parse.GetValue(restarts) >= parse.GetValue(windows))
            {
                // Every process is measured in at least one round.
                await Console.Error.WriteLineAsync("--restarts: 0 to one fewer than --windows");
                return SharedCommandOptions.UsageError;
            }

            return await execute(Options(parse, "interleave", [BackendName(parse.GetValue(backend))]) with
        {
            Variants = SharedCommandOptions.Names(parse.GetValue(variants))!,
            Windows = parse.GetValue(windows),
            WindowOps = parse.GetValue(windowOps),
            Restarts = parse.GetValue(restarts),
            Settle = TimeSpan.FromSeconds(parse.GetValue(settle)),
            InterleaveScenario = parse.GetValue(load)!,
            SyncStandbyPostgresAdmin = parse.GetValue(syncStandby),
        });
        });

        // Each of these measures the relational stores alone: on mongodb it stops before any run.
        Task<int> OnRelational(ParseResult parse, string command, Func<RunnerOptions, RunnerOptions> with) =>
            BackendName(parse.GetValue(backend)) == "mongodb"
                ? Console.Error.WriteLineAsync($"{command} runs on sqlite or postgres").ContinueWith(_ => SharedCommandOptions.UsageError, TaskScheduler.Default)
                : execute(with(Options(parse, command, [BackendName(parse.GetValue(backend))])));

        events.SetAction(parse => OnRelational(parse, "events", o => o with
        {
            EventLatencyWorkflows = parse.GetValue(latencyWorkflows),
            EventBacklog = parse.GetValue(backlog),
        }));
        schedules.SetAction(parse => OnRelational(parse, "schedules", o => o with
        {
            ScheduleCount = parse.GetValue(scheduleCount),
            ScheduleMinutes = parse.GetValue(minutes),
            ScheduleSpreads = parse.GetValue(spread) is "both" ? [SchedulesBenchmark.OnTheMinute, SchedulesBenchmark.Staggered] : [parse.GetValue(spread)!],
            Windows = parse.GetValue(windows),
            WindowOps = parse.GetValue(windowOps),
        }));
        forEach.SetAction(parse => OnRelational(parse, "foreach", o => o with
        {
            ForEachInstances = parse.GetValue(forEachInstances),
            ForEachItems = parse.GetValue(forEachItems),
            ForEachConcurrency = parse.GetValue(forEachConcurrency),
        }));

        search.SetAction(async parse =>
        {
            if (BackendName(parse.GetValue(backend)) == "mongodb")
            {
                await Console.Error.WriteLineAsync("search runs on sqlite or postgres");
                return SharedCommandOptions.UsageError;
            }

            return await execute(Options(parse, "search", [BackendName(parse.GetValue(backend))]) with
            {
                SearchInstances = parse.GetValue(instances),
                SearchRequests = parse.GetValue(requests),
            });
        });

        return run;
    }

    /// <summary>A whole-number option from <paramref name="min"/> to <paramref name="max"/>; a value outside says the range.</summary>
    private static Option<int> Bounded(string name, string description, int defaultValue, int min, int max, string unit)
    {
        var option = new Option<int>(name) { Description = description, DefaultValueFactory = _ => defaultValue };
        option.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() < min || result.GetValueOrDefault<int>() > max)
            {
                result.AddError(string.Create(CultureInfo.InvariantCulture, $"{name}: {min:N0} to {max:N0} {unit}"));
            }
        });
        return option;
    }

    /// <summary>The backend's name as the runner uses it (postgresql is postgres).</summary>
    private static string BackendName(string? option) => option switch
    {
        "sqlite" => "sqlite",
        "mongodb" => "mongodb",
        _ => "postgres",
    };
}
