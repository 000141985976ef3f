using System.Globalization;
using System.Text;
using System.Text.Json;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Hosting;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// A ratio that a noisy machine cannot fake: two (or more) variants of the service, each its own process on its own fresh
/// database of the same server, both running the whole time, loaded in turns (windows of the same load, signal-roundtrip
/// or callout-roundtrip, A B, B A, A B, …) so that whatever the machine does meanwhile falls on every variant alike. Each window's throughput,
/// latency and CPU per operation (service, database server, machine) are kept; the report gives every window, each
/// variant's medians and the spread of the paired ratios. The variants differ only in their settings (telemetry, the console).
/// With --restarts, every variant's process is started again at the same rounds, so that one process's own luck does not
/// become its variant's difference; each paired median comes with a bootstrap interval, and each window with the WAL it wrote.
/// </summary>
internal sealed class InterleavedRun(RunnerOptions options, string backendName)
{
    /// <summary>The variants --variants may name, with the service settings each adds.</summary>
    public static readonly IReadOnlyDictionary<string, string> Known = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["off"] = "no exporter, as the service ships",
        ["off-again"] = "the same as off, in a process and database of its own: the control, whose difference from off is the method's own",
        ["otlp"] = "traces (every request: the default parent-based always-on sampler), metrics (every 10 s) and logs over OTLP/HTTP protobuf to a receiver in the runner's process",
        ["otlp-sampled"] = "as otlp, with one trace in ten recorded (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.1)",
        ["prometheus"] = "the Prometheus scrape endpoint on (Telemetry:Prometheus:Enabled), never scraped: the meters' cost alone",
        ["console-off"] = "the operations console not served (Console:Enabled=false): off's difference from it is what the console's middlewares cost every API request",
        ["gc-workstation"] = "workstation garbage collection (DOTNET_gcServer=0) instead of the server collection the web SDK sets",
        ["gc-conserve"] = "server garbage collection told to conserve memory (DOTNET_GCConserveMemory=7)",
        ["wx-off"] = "write-xor-execute off (DOTNET_EnableWriteXorExecute=0): JIT-compiled code mapped once, not twice through shared memory",
        ["lean"] = "workstation garbage collection and write-xor-execute off together (DOTNET_gcServer=0, DOTNET_EnableWriteXorExecute=0)",
        ["image-runtime"] = "the runtime settings the image sets (the Dockerfile's ENV DOTNET_ lines, such as the GC's gen0 budget) on the Release build",
        ["pgo-off"] = "tiered PGO off (DOTNET_TieredPGO=0): the cold-start lever, warm",
        ["events"] = "one subscription to every event of the load's definition (events out), delivered to a webhook receiver in the runner's process that answers 200 at once",
        ["events-batched"] = "as events, the subscription taking batches of up to 100 events (maxEventsPerBatch): the events due together posted in one request",
        ["events-claimed"] = "as events, with the hand-over off (Events:HandOverCapacity=0): every delivery claimed",
        ["events-undelivered"] = "as events, with its node's dispatcher off (Events:Dispatch=false): every delivery written with its commit, none claimed, posted or settled: what the outbox's writes cost alone",
        ["posts-alone"] = "as off, and after each workflow the runner itself posts two signed CloudEvents of the service's size and shape (its start and completion) to a webhook receiver in its process: the HTTP traffic of events out without the outbox, what posting alone costs this machine",
        ["sync-standby"] = "as off, on the PostgreSQL primary named by --sync-standby-postgres, whose commits wait for a synchronous standby (what durability on a second server costs)",
        ["search-attributes"] = "signal-roundtrip's definition with three search attributes set from its input (tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search.json): a keyword, a number and a datetime, evaluated and written by the start (the input never changes)",
        ["search-attributes-vars"] = "as search-attributes, each attribute also reading the variables (tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search-vars.json): evaluated and written, with new values, by both commits",
        ["business-input"] = "as off, each instance started with what a client would send about it ({ n, region, amount, submittedAt }, the values search-attributes computes) instead of { n }: the baseline of search-attributes-paths",
        ["search-attributes-paths"] = "as business-input, with three search attributes that are paths into the input (tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search-paths.json: input.region, input.amount, input.submittedAt), read from its JSON without a script engine and written by the start",
        ["pgo-off-no-delay"] = "tiered PGO off and no call-counting delay (DOTNET_TieredPGO=0, DOTNET_TC_CallCountingDelayMs=0)",
    };

    /// <summary>The loads --scenario may name, each as the report describes it.</summary>
    public static readonly IReadOnlyDictionary<string, string> Loads = new Dictionary<string, string>(StringComparer.Ordinal)
    {
        [SignalRoundtripScenario.Definition] = "signal-roundtrip (start, signal, long-poll until completed)",
        [CallOutRoundtripScenario.Definition] = "callout-roundtrip (start, one http call-out per operation to a local endpoint in the runner that answers at once, long-poll until completed)",
    };

    /// <summary>
    /// The report's file name without its extension: the default load's keeps the name it always had, another's names it,
    /// so that a call-out run never overwrites the signal-roundtrip run of the same variants and day.
    /// </summary>
    public static string FileStem(string backend, DateTimeOffset started, IReadOnlyList<string> variants, string load) =>
        string.Create(CultureInfo.InvariantCulture, $"interleaved-{backend}-{started:yyyy-MM-dd}-{string.Join("-", variants)}")
        + (load == SignalRoundtripScenario.Definition ? string.Empty : "-" + load);

    /// <summary>
    /// A variant named at-REV (REV: a commit of this repository, 7 to 40 hex digits) is the service as built from that
    /// commit, in a worktree of its own, with off's settings: the way to bisect a change in throughput between commits.
    /// </summary>
    public static bool IsKnown(string name) =>
        Known.ContainsKey(name) || CommitBuild.IsCommitVariant(name) || IsEventsAtCommit(name) || IsSearchAtCommit(name);

    /// <summary>events-at-REV: the service built from commit REV, subscribed as events is (the cost of a change to events out).</summary>
    private static bool IsEventsAtCommit(string name) =>
        name.StartsWith(EventsPrefix, StringComparison.Ordinal) && CommitBuild.IsCommitVariant(name[EventsPrefix.Length..]);

    private const string EventsPrefix = "events-";

    /// <summary>search-attributes-at-REV: the service built from commit REV, publishing the definition search-attributes does.</summary>
    private static bool IsSearchAtCommit(string name) =>
        name.StartsWith(SearchPrefix, StringComparison.Ordinal) && CommitBuild.IsCommitVariant(name[SearchPrefix.Length..]);

    /// <summary>The variants whose load starts each instance with <see cref="SignalRoundtripScenario.BusinessInput"/>.</summary>
    private static bool SendsBusinessInput(string name) => name is "business-input" or "search-attributes-paths";

    private const string SearchPrefix = "search-attributes-";

    private static bool Subscribes(string name) =>
        name is "events" or "events-batched" or "events-claimed" or "events-undelivered" || IsEventsAtCommit(name);

    /// <summary>The commit a variant is built from; null for the build under test.</summary>
    private static string? CommitOf(string name) =>
        CommitBuild.IsCommitVariant(name) ? name[3..]
        : IsEventsAtCommit(name) ? name[(EventsPrefix.Length + 3)..]
        : IsSearchAtCommit(name) ? name[(SearchPrefix.Length + 3)..]
        : null;

    private static string Describe(string name) =>
        Known.TryGetValue(name, out var description) ? description
        : IsEventsAtCommit(name) ? $"the service built from commit {CommitOf(name)}, as events"
        : IsSearchAtCommit(name) ? $"the service built from commit {CommitOf(name)}, as search-attributes"
        : $"the service built from commit {name[3..]}, as off";

    /// <summary>search-attributes (and -vars) publish signal-roundtrip with three search attributes in place of the example's (same name, same steps).</summary>
    private static string DefinitionFile(string variant, string file) => (variant, file) switch
    {
        ("search-attributes", "docs/examples/signal-roundtrip.json") => "tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search.json",
        ("search-attributes-vars", "docs/examples/signal-roundtrip.json") => "tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search-vars.json",
        ("search-attributes-paths", "docs/examples/signal-roundtrip.json") => "tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search-paths.json",
        (_, "docs/examples/signal-roundtrip.json") when IsSearchAtCommit(variant) => "tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search.json",
        _ => file,
    };

    private const int Concurrency = 64;
    private const int SignalWorkers = 8;

    private readonly BenchApiKey _apiKey = BenchApiKey.Create();

    /// <summary>callout-roundtrip's endpoint, one for every variant, started with the run and stopped after its variants.</summary>
    private CallOutEndpoint? _target;

    /// <summary>Each subscribing variant's receiver (its own, so its own secret), started with the run.</summary>
    private readonly Dictionary<string, WebhookReceiver> _hooks = [];

    /// <summary>posts-alone's poster (to its receiver in <see cref="_hooks"/>), made with the run.</summary>
    private readonly Dictionary<string, WebhookPoster> _posters = [];

    private static bool Receives(string name) => Subscribes(name) || name == "posts-alone";

    /// <summary>Whose posts a variant's receiver counts, for the report.</summary>
    private string ReceiverNote(string name) =>
        _posters.TryGetValue(name, out var poster) ? $"as is the runner's own posting (failed posts: {poster.Failures:N0})"
        : name == "events-undelivered" ? "and it gets nothing: the variant's node does not dispatch"
        : "the dispatcher's in the service's";

    private bool CallsOut => options.InterleaveScenario == CallOutRoundtripScenario.Definition;

    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        var work = Path.Combine(Path.GetTempPath(), $"wf-interleave-{backendName}-{started:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        Console.WriteLine($"{backendName}: {options.InterleaveScenario}, variants {string.Join(", ", options.Variants)}; {options.Windows} rounds of {options.WindowOps:N0} ops each, concurrency {Concurrency}; logs in {work}");
        await using var receiver = OtlpReceiver.Start();
        await using var target = CallsOut ? new CallOutEndpoint(TimeSpan.Zero) : null;
        _target = target;
        var variants = new List<Variant>();
        try
        {
            foreach (var name in options.Variants.Where(Receives))
            {
                _hooks[name] = await WebhookReceiver.StartAsync(cancellationToken);
                if (!Subscribes(name))
                {
                    _posters[name] = new WebhookPoster(_hooks[name]);
                }
            }

            foreach (var name in options.Variants)
            {
                variants.Add(await StartAsync(name, receiver, work, cancellationToken));
            }

            // Warm-up: every variant until its JIT has settled, then the databases' housekeeping done now rather than in a window.
            await WarmUpAsync(variants, cancellationToken);
            var windows = new List<Window>();
            var process = 1;
            foreach (var (round, variant) in AlternatingWindows.Turns(variants, options.Windows))
            {
                if (ProcessOf(round) != process)
                {
                    // A fresh process for every variant (started in turns, A B then B A, as the windows are), warmed up again.
                    process = ProcessOf(round);
                    Console.WriteLine($"  process {process} of every variant, from round {round}");
                    foreach (var each in process % 2 == 0 ? Enumerable.Reverse(variants) : variants)
                    {
                        await each.RestartAsync(cancellationToken);
                    }

                    await WarmUpAsync(variants, cancellationToken);
                }

                var window = await MeasureAsync(variant, round, process, cancellationToken);
                windows.Add(window);
                Console.WriteLine($"  round {window.Round} {window.Variant}: {window.OpsPerSecond:N0} ops/s, p50 {window.Latency.P50:N1} p99 {window.Latency.P99:N1} ms, service {window.ServiceCpuMsPerOp:N3} ms/op, database {window.DatabaseCpuMsPerOp:N3} ms/op, failures {window.Failures}");
            }

            var totals = receiver.Totals;
            var (markdown, json) = Save(windows, totals, receiver.SpanNames, started);
            Console.WriteLine($"{backendName}: wrote {markdown} and {json}");
            return windows.All(w => w.Failures == 0);
        }
        finally
        {
            foreach (var variant in variants)
            {
                await variant.DisposeAsync();
            }

            foreach (var poster in _posters.Values)
            {
                await poster.DisposeAsync();
            }

            foreach (var hooks in _hooks.Values)
            {
                await hooks.DisposeAsync();
            }
        }
    }

    private const int WarmUpOps = 500;

    private int ProcessOf(int round) => ProcessOf(round, options.Restarts, options.Windows);

    /// <summary>
    /// Which of a variant's processes (1-based) runs round <paramref name="round"/> (1-based) of <paramref name="rounds"/>:
    /// <paramref name="restarts"/> + 1 spans of consecutive rounds, as even as they divide.
    /// </summary>
    internal static int ProcessOf(int round, int restarts, int rounds) => ((round - 1) * (restarts + 1) / rounds) + 1;

    private async Task WarmUpAsync(IReadOnlyList<Variant> variants, CancellationToken cancellationToken)
    {
        foreach (var variant in variants)
        {
            var warm = await WarmUp.RunAsync(Scenario(WarmUpOps, variant.Name), Context(variant, WarmUpOps, cancellationToken, out var progress), variant.Client);
            await progress.DisposeAsync();
            Console.WriteLine($"  {variant.Name}: warm-up {warm.Ops:N0} ops in {warm.Duration.TotalSeconds:N1} s, {warm.Rounds} rounds (JIT {warm.LastRoundJitShare ?? 0:P1} of the last)");
        }

        foreach (var variant in variants)
        {
            await variant.Backend.DoHousekeepingNowAsync(cancellationToken);
        }
    }

    /// <summary>Only PostgreSQL's server processes are read (the machine's); no other backend's server is measured.</summary>
    private bool MeasuresDatabaseServer => backendName == "postgres";

    /// <summary>What the database CPU column holds, as the report says it.</summary>
    private string DatabaseServerMeasured => MeasuresDatabaseServer
        ? "every PostgreSQL server process on this machine"
        : $"no database server (none is measured on {backendName}: its column is 0)";

    /// <summary>Quiet after each window before its CPU is read (--settle): by default longer than the span exporter's batch delay (5 s).</summary>
    private TimeSpan Settle => options.Settle;

    internal static readonly JsonSerializerOptions ReportJson = new(JsonSerializerDefaults.Web) { WriteIndented = true };

    private ClosedLoopScenario Scenario(int ops, string variant) => CallsOut
        ? new CallOutRoundtripScenario
        {
            Name = ScenarioCatalog.CallOutSustained, TierLabel = "Scaled", Ops = ops, Concurrency = Concurrency,
            Target = _target ?? throw new InvalidOperationException("the call-out endpoint starts with the run"),
        }
        : new SignalRoundtripScenario
        {
            Name = ScenarioCatalog.Sustained, TierLabel = "Scaled", Ops = ops, Concurrency = Concurrency, WithBusinessInput = SendsBusinessInput(variant),
            Posts = _posters.GetValueOrDefault(variant),
        };

    private ScenarioContext Context(Variant variant, int ops, CancellationToken cancellationToken, out ProgressMeter progress)
    {
        progress = new ProgressMeter($"{backendName}-{variant.Name}", ops, variant.Service.Pid);
        return new ScenarioContext { Backend = variant.Backend, Options = options, Progress = progress, Cancellation = cancellationToken, Client = variant.Client };
    }

    private async Task<Window> MeasureAsync(Variant variant, int round, int process, CancellationToken cancellationToken)
    {
        // The log position is read outside the CPU readings, over a connection that stays open (PostgresBackend).
        var walBefore = await variant.Backend.ReadWalPositionAsync(cancellationToken);
        ResourceProbe.ResetPeak(variant.Service.Pid);
        var before = ResourceProbe.Read(variant.Service.Pid);
        var measurement = await Scenario(options.WindowOps, variant.Name).MeasureAsync(Context(variant, options.WindowOps, cancellationToken, out var progress));
        if (_posters.TryGetValue(variant.Name, out var poster) && !await poster.WaitDrainedAsync(TimeSpan.FromSeconds(60), cancellationToken))
        {
            // Its posts belong in its own window's CPU, as the dispatcher's trailing posts are in events'.
            throw new InvalidOperationException($"{variant.Name}: its posts were not all answered within 60 s of its window");
        }

        // The window's deferred work (spans the exporter batches for up to 5 s) is the window's cost: read the CPU after it.
        await Task.Delay(Settle, cancellationToken);
        var after = ResourceProbe.Read(variant.Service.Pid);
        var walAfter = await variant.Backend.ReadWalPositionAsync(cancellationToken);
        await progress.DisposeAsync();
        var ops = measurement.Samples.Count;
        double PerOp(double seconds) => Math.Round(seconds * 1000 / ops, 3);
        return new Window(variant.Name, round, process, ops, Math.Round(measurement.Duration.TotalSeconds, 2),
            Math.Round(ops / measurement.Duration.TotalSeconds, 1), LatencySummary.From(measurement.Samples.Select(s => s.EndToEndMs))!,
            PerOp(after.ServiceCpuSeconds - before.ServiceCpuSeconds), PerOp(MeasuresDatabaseServer ? after.DatabaseServerCpuSeconds - before.DatabaseServerCpuSeconds : 0),
            PerOp(after.MachineBusyCpuSeconds - before.MachineBusyCpuSeconds), Math.Round(after.ServicePeakWorkingSetBytes / 1048576.0, 1),
            measurement.Samples.Count(s => !s.Ok), walAfter - walBefore is { } wal ? Math.Round((double)wal / ops) : null);
    }

    private async Task<Variant> StartAsync(string name, OtlpReceiver receiver, string work, CancellationToken cancellationToken)
    {
        var backend = name == "sync-standby"
            ? new PostgresBackend(options.SyncStandbyPostgresAdmin
                ?? throw new InvalidOperationException("the sync-standby variant needs --sync-standby-postgres"), options.KeepDatabase)
            : options.CreateBackend(backendName);
        await backend.ProvisionAsync(Path.Combine(work, name), cancellationToken);
        var environment = new Dictionary<string, string>(backend.ServiceEnvironment)
        {
            ["RateLimiting__PermitsPerPeriod"] = "1000000",
            ["RateLimiting__Burst"] = "10000000",
            ["Workers__NodeId"] = name,
        };
        foreach (var (key, value) in _apiKey.ServiceEnvironment)
        {
            environment[key] = value;
        }

        // The load's own settings (callout-roundtrip: its endpoint opened to the egress policy), for every variant alike;
        // an at-REV build from before a setting existed ignores it.
        var load = Scenario(0, name);
        foreach (var (key, value) in load.ServiceSettings)
        {
            environment[key] = value;
        }

        if (backendName == "postgres")
        {
            // The database's CPU is the sum over its server processes now: a connection the pool closed between two
            // readings would take its backend's CPU with it. The waiting variants keep their connections.
            environment["Store__ConnectionString"] += ";Connection Idle Lifetime=3600;Connection Pruning Interval=3600";
        }

        if (name is "otlp" or "otlp-sampled")
        {
            foreach (var (key, value) in receiver.ServiceEnvironment($"workflow-bench-{name}"))
            {
                environment[key] = value;
            }
        }

        if (name == "otlp-sampled")
        {
            environment["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio";
            environment["OTEL_TRACES_SAMPLER_ARG"] = "0.1";
        }

        if (name == "prometheus")
        {
            environment["Telemetry__Prometheus__Enabled"] = "true";
        }

        if (Subscribes(name))
        {
            foreach (var (key, value) in _hooks[name].ServiceSettings)
            {
                environment[key] = value;
            }

            if (name == "events-claimed")
            {
                environment["Events__HandOverCapacity"] = "0";
            }

            if (name == "events-undelivered")
            {
                environment["Events__Dispatch"] = "false";
            }
        }

        if (name == "console-off")
        {
            environment["Console__Enabled"] = "false";
        }

        if (name is "gc-workstation" or "lean")
        {
            environment["DOTNET_gcServer"] = "0";
        }

        if (name is "wx-off" or "lean")
        {
            environment["DOTNET_EnableWriteXorExecute"] = "0";
        }

        if (name == "gc-conserve")
        {
            environment["DOTNET_GCConserveMemory"] = "7";
        }

        if (name == "image-runtime")
        {
            foreach (var (key, value) in ServiceBuild.ImageRuntimeSettings(options.RepositoryRoot))
            {
                environment[key] = value;
            }
        }

        if (name.StartsWith("pgo-off", StringComparison.Ordinal))
        {
            environment["DOTNET_TieredPGO"] = "0";
            if (name == "pgo-off-no-delay")
            {
                environment["DOTNET_TC_CallCountingDelayMs"] = "0";
            }
        }

        var serviceDll = options.ServiceDll;
        if (CommitOf(name) is { } commit)
        {
            serviceDll = await CommitBuild.BuildAsync(options.RepositoryRoot, commit, cancellationToken);
        }

        Variant? variant = null;
        try
        {
            variant = await Variant.StartAsync(name, backend, serviceDll, environment, Path.Combine(work, name), _apiKey.Key, cancellationToken);
            foreach (var file in load.DefinitionFiles.Select(f => DefinitionFile(name, f)))
            {
                await variant.Client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(options.RepositoryRoot, file), cancellationToken), cancellationToken);
            }

            if (Subscribes(name))
            {
                var hooks = _hooks[name];
                var subscription = await variant.Client.SubscribeAsync("bench-receiver", hooks.Url, [options.InterleaveScenario], cancellationToken,
                    name == "events-batched" ? 100 : null);
                hooks.UseSecret((string)subscription["secret"]!);
            }
            return variant;
        }
        catch
        {
            // Not yet among the variants the run disposes: its process and database go now (a process that did not
            // start took its database with it).
            if (variant is not null)
            {
                await variant.DisposeAsync();
            }

            throw;
        }
    }

    private (string Markdown, string Json) Save(IReadOnlyList<Window> windows, OtlpTotals received, IReadOnlyDictionary<string, long> spanNames, DateTimeOffset started)
    {
        Directory.CreateDirectory(options.OutputDirectory);
        var stem = Path.Combine(options.OutputDirectory, FileStem(backendName, started, options.Variants, options.InterleaveScenario));
        var json = stem + ".json";
        File.WriteAllText(json, JsonSerializer.Serialize(new { backend = backendName, scenario = options.InterleaveScenario, started, options.Variants, rounds = options.Windows, options.Restarts, settleSeconds = options.Settle.TotalSeconds, options.WindowOps, Concurrency, SignalWorkers, windows, received, spanNames, eventsReceived = _hooks.ToDictionary(h => h.Key, h => h.Value.Count), postFailures = _posters.ToDictionary(p => p.Key, p => p.Value.Failures) },
            ReportJson));

        var text = new StringBuilder();
        var baseline = options.Variants[0];
        text.AppendLine(CultureInfo.InvariantCulture, $"# Interleaved comparison on {backendName}, {options.InterleaveScenario}: {string.Join(" vs ", options.Variants)} ({started:yyyy-MM-dd})");
        text.AppendLine();
        text.AppendLine("Generated by the benchmark runner; the numbers are this run's. Command:");
        text.AppendLine();
        text.AppendLine("```bash");
        text.AppendLine("dotnet run -c Release --project tests/WorkflowService.Benchmarks -- " + string.Join(' ', Environment.GetCommandLineArgs().Skip(1)));
        text.AppendLine("```");
        text.AppendLine();
        text.AppendLine(CultureInfo.InvariantCulture, $"Each variant is its own service process ({SignalWorkers} signal workers) on its own fresh database of the same server, all started before the first window and running throughout{(options.Restarts > 0 ? string.Create(CultureInfo.InvariantCulture, $" (each variant's process started again {options.Restarts} time(s), see below)") : "")}. The load is {Loads[options.InterleaveScenario]} at concurrency {Concurrency}, in windows of {options.WindowOps:N0} operations taken in turns, A B then B A, for {options.Windows} rounds, after each variant's JIT settled. CPU per operation is read from /proc for the window and the {Settle.TotalSeconds:0.#} s of quiet after it (so that work the window deferred, such as the span exporter's batches, counts in it): the variant's service process, {DatabaseServerMeasured}, and the whole machine (idle polls of the waiting variants included, alike for all).");
        if (MeasuresDatabaseServer)
        {
            text.AppendLine();
            text.AppendLine("WAL bytes per operation: the server's write-ahead log position (pg_current_wal_lsn()) read before the window and after its quiet, exact when read; the whole server's, so the waiting variants' idle polls are in it, alike for all. It does not drift with the machine's speed; full-page images after a checkpoint make it jump in the windows they fall in.");
            if (options.Variants.Contains("sync-standby"))
            {
                text.AppendLine();
                text.AppendLine("sync-standby's WAL is its own primary's (the server --sync-standby-postgres names), where no other variant's idle polls write: its figure lacks theirs.");
            }
        }

        if (CallsOut)
        {
            text.AppendLine();
            text.AppendLine("Every operation makes exactly one http call-out, so the CPU per operation is the cost per call: a workflow whose only work is that call (its start, the call, the answer committed, the long-poll answered). The endpoint that answers runs in the runner's process: its CPU is in the machine column, not the service's.");
        }

        foreach (var (name, hooks) in _hooks)
        {
            text.AppendLine();
            text.AppendLine(CultureInfo.InvariantCulture, $"The {name} variant's receiver got {hooks.Count:N0} events ({hooks.DistinctCount:N0} distinct deliveries) over the run, warm-up included. It runs in the runner's process: its CPU is in the machine column, {ReceiverNote(name)}.");
        }

        text.AppendLine();
        foreach (var variant in options.Variants)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"- **{variant}**: {Describe(variant)}");
        }

        text.AppendLine();
        text.AppendLine("## Medians");
        text.AppendLine();
        text.AppendLine(CultureInfo.InvariantCulture, $"| variant | ops/s | vs {baseline} | paired ratios (min … max) | p50 ms | p99 ms | service CPU ms/op | database CPU ms/op | machine CPU ms/op | service peak MB |");
        text.AppendLine("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        var baseOps = Median(windows.Where(w => w.Variant == baseline).Select(w => w.OpsPerSecond));
        foreach (var variant in options.Variants)
        {
            var mine = windows.Where(w => w.Variant == variant).ToList();
            var ops = Median(mine.Select(w => w.OpsPerSecond));
            var paired = mine.Select(w => w.OpsPerSecond / windows.Single(b => b.Variant == baseline && b.Round == w.Round).OpsPerSecond).Order().ToList();
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {variant} | {ops:N0} | {ops / baseOps:P1} | {paired[0]:P1} … {paired[^1]:P1} | {Median(mine.Select(w => w.Latency.P50)):N1} | {Median(mine.Select(w => w.Latency.P99)):N1} | {Median(mine.Select(w => w.ServiceCpuMsPerOp)):N3} | {Median(mine.Select(w => w.DatabaseCpuMsPerOp)):N3} | {Median(mine.Select(w => w.MachineCpuMsPerOp)):N3} | {mine.Max(w => w.ServicePeakMegabytes):N0} |");
        }

        text.AppendLine();
        text.AppendLine("## Paired with the baseline, round by round");
        text.AppendLine();
        text.AppendLine(CultureInfo.InvariantCulture,
            $"Each round's window of a variant against the same round's window of {baseline}, then the median over the rounds: steadier than a ratio of medians when the machine's speed drifts between rounds.");
        text.AppendLine();
        text.AppendLine("The interval is where 95 % of the medians of 10,000 resamplings fall (with replacement: the processes, then each chosen process's rounds, since rounds of one process share its luck): a difference it does not include 100 % in is one this run resolved.");
        text.AppendLine();
        text.AppendLine("| variant | ops/s ratio, median | 95 % interval | service CPU ms/op, median difference | database CPU ms/op, median difference | machine CPU ms/op, median difference | WAL bytes/op, median difference |");
        text.AppendLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var variant in options.Variants.Where(v => v != baseline))
        {
            var pairs = windows.Where(w => w.Variant == variant)
                .Select(w => (Mine: w, Base: windows.Single(b => b.Variant == baseline && b.Round == w.Round)))
                .ToList();
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {variant} | {Median(pairs.Select(p => p.Mine.OpsPerSecond / p.Base.OpsPerSecond)):P1} | {Interval(pairs.Select(p => (p.Mine.Process, p.Mine.OpsPerSecond / p.Base.OpsPerSecond)))} | {Median(pairs.Select(p => p.Mine.ServiceCpuMsPerOp - p.Base.ServiceCpuMsPerOp)):+0.000;-0.000;0.000} | {Median(pairs.Select(p => p.Mine.DatabaseCpuMsPerOp - p.Base.DatabaseCpuMsPerOp)):+0.000;-0.000;0.000} | {Median(pairs.Select(p => p.Mine.MachineCpuMsPerOp - p.Base.MachineCpuMsPerOp)):+0.000;-0.000;0.000} | {WalDifference(pairs.Select(p => p.Mine.WalBytesPerOp - p.Base.WalBytesPerOp))} |");
        }

        if (options.Restarts > 0)
        {
            text.AppendLine();
            text.AppendLine("## Paired with the baseline, process by process");
            text.AppendLine();
            text.AppendLine(CultureInfo.InvariantCulture,
                $"Every variant's service process was started again {options.Restarts} time(s) on its database (--restarts), at the same rounds for all, and warmed up again. The median ops/s ratio to {baseline} over each process's rounds: a spread across processes larger than within one is a process's own luck, which the overall median above averages out.");
            text.AppendLine();
            var processes = windows.Select(w => w.Process).Distinct().Order().ToList();
            text.AppendLine("| variant | " + string.Join(" | ", processes.Select(p => string.Create(CultureInfo.InvariantCulture, $"process {p}"))) + " |");
            text.AppendLine("| --- |" + string.Concat(processes.Select(_ => " ---: |")));
            foreach (var variant in options.Variants.Where(v => v != baseline))
            {
                var cells = processes.Select(process => Median(windows.Where(w => w.Variant == variant && w.Process == process)
                    .Select(w => w.OpsPerSecond / windows.Single(b => b.Variant == baseline && b.Round == w.Round).OpsPerSecond)));
                text.AppendLine(CultureInfo.InvariantCulture, $"| {variant} | {string.Join(" | ", cells.Select(c => c.ToString("P1", CultureInfo.InvariantCulture)))} |");
            }
        }

        text.AppendLine();
        text.AppendLine("## Every window");
        text.AppendLine();
        text.AppendLine("| round | process | variant | ops | seconds | ops/s | p50 ms | p99 ms | service CPU ms/op | database CPU ms/op | machine CPU ms/op | WAL bytes/op | service peak MB | failures |");
        text.AppendLine("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var w in windows)
        {
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {w.Round} | {w.Process} | {w.Variant} | {w.Ops:N0} | {w.Seconds:N2} | {w.OpsPerSecond:N0} | {w.Latency.P50:N1} | {w.Latency.P99:N1} | {w.ServiceCpuMsPerOp:N3} | {w.DatabaseCpuMsPerOp:N3} | {w.MachineCpuMsPerOp:N3} | {w.WalBytesPerOp?.ToString("N0", CultureInfo.InvariantCulture) ?? "–"} | {w.ServicePeakMegabytes:N0} | {w.Failures} |");
        }

        if (received.TraceRequests + received.MetricRequests + received.LogRequests > 0)
        {
            text.AppendLine();
            text.AppendLine("## What the OTLP receiver got (warm-ups included)");
            text.AppendLine();
            text.AppendLine(CultureInfo.InvariantCulture,
                $"{received.Spans:N0} spans in {received.TraceRequests:N0} trace exports ({received.TraceBytes / 1048576.0:N1} MiB), {received.MetricRequests:N0} metric exports ({received.MetricBytes / 1048576.0:N2} MiB), {received.LogRecords:N0} log records; {received.UnreadableRequests:N0} exports unreadable. Spans by name: {string.Join(", ", spanNames.OrderByDescending(n => n.Value).Select(n => $"{n.Key} {n.Value:N0}"))}.");
        }

        var markdown = stem + ".md";
        File.WriteAllText(markdown, text.ToString());
        return (markdown, json);
    }

    private static double Median(IEnumerable<double> values) => AlternatingWindows.Median(values);

    /// <summary>The median of the paired WAL differences; a dash where the backend has no log to read.</summary>
    private static string WalDifference(IEnumerable<double?> differences) =>
        differences.OfType<double>().ToList() is { Count: > 0 } known
            ? Median(known).ToString("+#,0;-#,0;0", CultureInfo.InvariantCulture)
            : "–";

    /// <summary>The interval of the paired ratios, grouped by the process that ran each round.</summary>
    private static string Interval(IEnumerable<(int Process, double Ratio)> pairs)
    {
        var (low, high) = MedianInterval([.. pairs.GroupBy(p => p.Process).Select(g => g.Select(p => p.Ratio).ToList())]);
        return string.Create(CultureInfo.InvariantCulture, $"{low:P1} … {high:P1}");
    }

    /// <summary>
    /// A percentile bootstrap of the median, in two stages: <paramref name="processes"/> (each the ratios of the rounds one
    /// process ran) resampled with replacement, then each chosen process's rounds, 10,000 times (a fixed seed, so a report
    /// reads the same when written again); the 2.5th and 97.5th percentiles of the medians. Rounds of one process share
    /// its luck, so they are not resampled as if independent; with one process it is the plain bootstrap of the rounds.
    /// </summary>
    internal static (double Low, double High) MedianInterval(List<List<double>> processes)
    {
        const int Resamplings = 10_000;
        var random = new Random(40);
        var medians = new double[Resamplings];
        var sample = new double[processes.Sum(p => p.Count)];
        for (var i = 0; i < Resamplings; i++)
        {
            var n = 0;
            for (var chosen = 0; chosen < processes.Count && n < sample.Length; chosen++)
            {
                var process = processes[random.Next(processes.Count)];
                for (var j = 0; j < process.Count && n < sample.Length; j++)
                {
                    sample[n++] = process[random.Next(process.Count)];
                }
            }

            medians[i] = Median(sample.Take(n));
        }

        Array.Sort(medians);
        return (medians[(int)(Resamplings * 0.025)], medians[(int)(Resamplings * 0.975) - 1]);
    }

    /// <summary>A variant's database and its service process (started again, on the same database, by <see cref="RestartAsync"/>).</summary>
    private sealed class Variant : IAsyncDisposable
    {
        private readonly string _serviceDll;
        private readonly IReadOnlyDictionary<string, string> _environment;
        private readonly string _directory;
        private readonly string _apiKey;

        private Variant(string name, Backend backend, string serviceDll, IReadOnlyDictionary<string, string> environment, string directory, string apiKey)
        {
            Name = name;
            Backend = backend;
            _serviceDll = serviceDll;
            _environment = environment;
            _directory = directory;
            _apiKey = apiKey;
        }

        public string Name { get; }

        public Backend Backend { get; }

        /// <summary>The running process; between a restart's stop and its start there is none.</summary>
        public ServiceProcess Service => _service ?? throw new InvalidOperationException($"{Name} has no service process running");

        public WorkflowClient Client => _client ?? throw new InvalidOperationException($"{Name} has no service process running");

        private ServiceProcess? _service;
        private WorkflowClient? _client;

        /// <summary>The variant with its first process started; its database is disposed with it, also when the start fails.</summary>
        public static async Task<Variant> StartAsync(string name, Backend backend, string serviceDll, IReadOnlyDictionary<string, string> environment,
            string directory, string apiKey, CancellationToken cancellationToken)
        {
            var variant = new Variant(name, backend, serviceDll, environment, directory, apiKey);
            try
            {
                await variant.StartProcessAsync(cancellationToken);
                return variant;
            }
            catch
            {
                await variant.DisposeAsync();
                throw;
            }
        }

        /// <summary>Stops the service process and starts another with the same build and settings on the same database.</summary>
        public async Task RestartAsync(CancellationToken cancellationToken)
        {
            await StopProcessAsync();
            await StartProcessAsync(cancellationToken);
        }

        private async Task StartProcessAsync(CancellationToken cancellationToken)
        {
            _service = await ServiceProcess.StartAsync(_serviceDll, _environment, SignalWorkers, _directory, _apiKey, cancellationToken);
            _client = new WorkflowClient(_service.Address, Concurrency, _apiKey);
        }

        /// <summary>
        /// Disposes the process and its client once: the fields are cleared first, so that a restart whose new process
        /// fails to start leaves nothing for the run's final disposal to dispose again.
        /// </summary>
        private async Task StopProcessAsync()
        {
            var (client, service) = (_client, _service);
            (_client, _service) = (null, null);
            client?.Dispose();
            if (service is not null)
            {
                await service.DisposeAsync();
            }
        }

        public async ValueTask DisposeAsync()
        {
            await StopProcessAsync();
            await Backend.DisposeAsync();
        }
    }

    internal sealed record Window(
        string Variant, int Round, int Process, int Ops, double Seconds, double OpsPerSecond, LatencySummary Latency,
        double ServiceCpuMsPerOp, double DatabaseCpuMsPerOp, double MachineCpuMsPerOp, double ServicePeakMegabytes, int Failures,
        double? WalBytesPerOp);
}
