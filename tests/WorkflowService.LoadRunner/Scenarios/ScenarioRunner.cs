using System.Globalization;
using System.Text.Json.Nodes;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Runs one backend's scenario set on a fresh database: per scenario a fresh service process with the scenario's
/// signal-worker count (none for the ceiling), unmeasured warm-up, the measured part, correctness checks, and resources
/// and the backend's counters read around the measured part.
/// </summary>
internal sealed class ScenarioRunner(RunnerOptions options, string backendName)
{
    private const int MaxListedInstances = 50_000;

    private ServiceProcess? _service;
    private ServiceProcess? _front;

    /// <summary>The run's folder of service logs and scratch files.</summary>
    private string? _work;

    /// <summary>The Redis configuration string for --transport redis (null otherwise), and the server the runner owns for it.</summary>
    private string? _redis;
    private OwnedRedisServer? _ownedRedis;

    /// <summary>The receiver of the service's telemetry for --telemetry otlp (null otherwise).</summary>
    private OtlpReceiver? _otlp;

    /// <summary>This run's Redis channel: nodes of another run on the same server are not its nodes.</summary>
    private readonly string _channel = $"wf-bench-{Guid.NewGuid():N}";

    /// <summary>The run's random API key (--auth apikey), or null (--auth none).</summary>
    private readonly BenchApiKey? _apiKey = options.Auth == AuthMode.ApiKey ? BenchApiKey.Create() : null;

    public async Task<RunReport> RunAsync(CancellationToken cancellationToken)
    {
        var scenarios = ScenarioCatalog.Select(options);
        var started = DateTimeOffset.UtcNow;
        var report = new RunReport
        {
            Backend = backendName,
            Date = started.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture),
            StartedAt = started,
            Tier = options.Only is null ? options.Tier.ToString().ToLowerInvariant() : "only " + string.Join(",", options.Only),
            Command = "dotnet run -c Release --project tests/WorkflowService.Benchmarks -- " + string.Join(' ', Environment.GetCommandLineArgs().Skip(1)),
            TableGrowthSeed = options.TableGrowthSeed,
            Authentication = options.AuthName,
            WakeUpTransport = options.Transport,
            Machine = MachineFacts.Read(options.RepositoryRoot),
        };
        if (options.Shipped)
        {
            report.Notes.Add("SHIPPED: the service as the image runs it: the ReadyToRun publish (linux-x64) with the Dockerfile's runtime settings "
                             + string.Join(", ", options.ServiceRuntimeSettings.Select(p => $"{p.Key}={p.Value}")) + ".");
        }

        if (options.TableGrowthSeed != RunnerOptions.FullTableGrowthSeed && scenarios.Any(s => s.Name == ScenarioCatalog.TableGrowth))
        {
            report.Notes.Add($"REDUCED SEED: signal-roundtrip-table-growth ran with {options.TableGrowthSeed:N0} stored instances instead of {RunnerOptions.FullTableGrowthSeed:N0} (--table-growth-seed).");
        }

        var work = Path.Combine(Path.GetTempPath(), $"wf-bench-{backendName}-{started:yyyyMMdd-HHmmss}");
        _work = work;
        Directory.CreateDirectory(work);
        Console.WriteLine($"{backendName}: {scenarios.Count} scenarios; service logs and scratch files in {work}");
        await using var backend = options.CreateBackend(backendName);
        await backend.ProvisionAsync(work, cancellationToken);
        report.CounterNotes = [.. backend.CounterNotes];
        if (options.Transport == "redis")
        {
            _redis = options.Redis;
            if (_redis is null)
            {
                if (OwnedRedisServer.Unavailable() is { } missing)
                {
                    throw new InvalidOperationException($"--transport redis: no --redis or WORKFLOW_BENCH_REDIS, and no redis-server to start: {missing}");
                }

                _ownedRedis = await OwnedRedisServer.StartAsync(cancellationToken);
                _redis = _ownedRedis.ConnectionString;
            }

            report.Notes.Add(_ownedRedis is null
                ? "Wake-ups over Redis pub/sub (--transport redis), on the server --redis or WORKFLOW_BENCH_REDIS named."
                : $"Wake-ups over Redis pub/sub (--transport redis), on a redis-server the runner started on this machine (127.0.0.1:{_ownedRedis.Port}, no persistence), whose CPU counts as other load.");
        }

        if (options.Telemetry == "otlp")
        {
            _otlp = OtlpReceiver.Start();
        }

        try
        {
            foreach (var scenario in scenarios)
            {
                if (scenario.NotApplicableTo(backendName) is { } why)
                {
                    Console.WriteLine($"== {backendName}-{scenario.Name}: not applicable ({why})");
                    continue;
                }

                var result = await RunScenarioAsync(backend, scenario, work, cancellationToken);
                report.Scenarios.Add(result);
                Console.WriteLine(Summary(result));
                if (report.Database.Count == 0)
                {
                    report.Database = new Dictionary<string, string>(await backend.ReadFactsAsync(cancellationToken));
                }
            }
        }
        finally
        {
            try
            {
                await StopServiceAsync();
            }
            finally
            {
                if (_ownedRedis is not null)
                {
                    await _ownedRedis.DisposeAsync();
                }

                if (_otlp is not null)
                {
                    var received = _otlp.Totals;
                    await _otlp.DisposeAsync();
                    report.Notes.Add(string.Create(CultureInfo.InvariantCulture,
                        $"Telemetry on (--telemetry otlp): every request traced (the default parent-based always-on sampler), traces, metrics (every 10 s) and logs exported over OTLP/HTTP protobuf to a receiver in the runner's process on this machine (127.0.0.1:{_otlp.Port}). It received {received.Spans:N0} spans in {received.TraceRequests:N0} trace exports ({received.TraceBytes / 1048576.0:N1} MiB{(received.UnreadableRequests > 0 ? $"; {received.UnreadableRequests:N0} exports unreadable" : "")}) {received.MetricRequests:N0} metric exports ({received.MetricBytes / 1048576.0:N1} MiB) and {received.LogRecords:N0} log records (the runs log warnings only) over the whole run, warm-ups included. Spans by name: {string.Join(", ", _otlp.SpanNames.OrderByDescending(n => n.Value).Select(n => $"{n.Key} {n.Value:N0}"))}."));
                }
            }
        }

        report.Indexes = [.. await backend.ReadIndexesAsync(cancellationToken)];
        report.FinishedAt = DateTimeOffset.UtcNow;
        return report;
    }

    private async Task<ScenarioResult> RunScenarioAsync(Backend backend, Scenario scenario, string work, CancellationToken cancellationToken)
    {
        var name = $"{backendName}-{scenario.Name}";
        Console.WriteLine($"== {name}: {scenario.Ops:N0} ops, concurrency {scenario.Concurrency}" +
                          (scenario.NeedsService ? $", {scenario.SignalWorkers} signal workers" : ", no service"));
        // Bounded: a scenario that hangs ends with what it measured so far failing, never with a hung run.
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(TimeSpan.FromSeconds(Math.Max(180, scenario.Ops * 0.2)));
        var ct = deadline.Token;

        // Every scenario gets a fresh service process: its CPU, memory high-water mark and database sessions are its own,
        // and stopping it at the end makes PostgreSQL publish every counter of its sessions.
        await StopServiceAsync();
        string? preparation = null;
        if (scenario.Preparation is { } prepare)
        {
            Console.WriteLine("  preparing (service stopped) ...");
            await using var idle = new ProgressMeter(name, 0, null);
            preparation = await prepare(Context(backend, null, idle, ct));
            Console.WriteLine($"  {preparation}");
        }

        // Where timing is the point, every scenario starts from a database with no housekeeping pending: what an earlier
        // scenario (or the preparation) left for autovacuum and the checkpointer is done now, not in the measured part.
        var housekeeping = scenario.SettlesJit ? await backend.DoHousekeepingNowAsync(ct) : null;
        if (housekeeping is not null)
        {
            Console.WriteLine($"  {housekeeping}");
        }

        // The backend's counters cover the whole service process (or the whole ceiling loop), warm-up included: a
        // database may publish a session's counters only when the session ends.
        var countersBefore = await backend.ReadCountersOnceWriterStoppedAsync(ct)
                             ?? await backend.ReadCountersAsync(scenario.NeedsService ? null : Environment.ProcessId, ct);
        WorkflowClient? client = null;
        if (scenario.NeedsService)
        {
            var environment = ServiceEnvironment(backend);
            foreach (var (key, value) in scenario.ServiceSettings)
            {
                environment[key] = value;
            }

            _service = await ServiceProcess.StartAsync(options.ServiceDll, environment, scenario.SignalWorkers, work, _apiKey?.Key, ct);
            client = new WorkflowClient(_service.Address, scenario.Concurrency, _apiKey?.Key);
            foreach (var file in scenario.DefinitionFiles)
            {
                await client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(options.RepositoryRoot, file), ct), ct);
            }
        }

        WorkflowClient? front = null;
        var service = _service;
        try
        {
            if (scenario.NeedsFrontNode)
            {
                // An API-only node: its long-polls hear of the service node's commits only through the transport's hints.
                var environment = new Dictionary<string, string>(ServiceEnvironment(backend))
                {
                    ["Workers__Enabled"] = "false",
                    ["Workers__NodeId"] = "front",
                    ["Workers__LongPollRecheck"] = CrossNodeRoundtripScenario.FrontRecheck.ToString("c", CultureInfo.InvariantCulture),
                };
                _front = await ServiceProcess.StartAsync(options.ServiceDll, environment, scenario.SignalWorkers, work, _apiKey?.Key, ct);
                front = new WorkflowClient(_front.Address, scenario.Concurrency + 1, _apiKey?.Key);
            }

            if (client is not null && (front is not null || _redis is not null))
            {
                await WaitForWakeUpsAsync(front is null ? [client] : [client, front], ct);
            }

            var from = DateTimeOffset.UtcNow;
            WarmUpResult warmUp;
            await using (var warm = new ProgressMeter(name, 0, null))
            {
                warmUp = await WarmUp.RunAsync(scenario, Context(backend, client, warm, ct, front), client);
            }

            Console.WriteLine(FormattableString.Invariant(
                $"  warm-up: {warmUp.Ops} ops in {warmUp.Duration.TotalSeconds:0.0} s") + (warmUp.LastRoundJitShare is { } share
                ? FormattableString.Invariant($", {warmUp.Rounds} rounds, JIT {100 * share:0.0} % of the last one ({(warmUp.Settled ? "settled" : "NOT settled")})")
                : string.Empty));

            var deadBefore = client is null ? 0 : await client.TotalAsync("/dead-letters", ct);
            // The node's own counters (conflicts, retries, wake-ups) around the measured part: the warm-up's are not the
            // scenario's. Read once the JIT has gone quiet, so that the compile time they report is the measured part's own.
            await WarmUp.WaitForQuietJitAsync(client, ct);
            var nodeBefore = client is null ? null : await client.GetNodeCountersAsync(ct);
            var frontBefore = front is null ? null : await front.GetNodeCountersAsync(ct);
            var clientJitBefore = System.Runtime.JitInfo.GetCompilationTime();
            // The process the resource columns describe: the service, or a peer's the scenario started.
            var measuredPid = service?.Pid ?? scenario.OwnProcessPid;
            var peakReset = measuredPid is { } pid && ResourceProbe.ResetPeak(pid);
            var before = ResourceProbe.Read(measuredPid);

            Measurement measurement;
            await using (var progress = new ProgressMeter(name, scenario.Ops, measuredPid))
            {
                measurement = await scenario.MeasureAsync(Context(backend, client, progress, ct, front));
            }

            var after = ResourceProbe.Read(measuredPid);
            var clientJitMs = (System.Runtime.JitInfo.GetCompilationTime() - clientJitBefore).TotalMilliseconds;
            var node = client is null ? null : (await client.GetNodeCountersAsync(ct)).Minus(nodeBefore!);
            var frontNode = front is null ? null : (await front.GetNodeCountersAsync(ct)).Minus(frontBefore!);
            AddWakeUpFigures(measurement, scenario, node, frontNode);
            AddRetentionFigures(measurement, scenario, node);
            int? deadLettered = client is null ? null : await client.TotalAsync("/dead-letters", ct) - deadBefore;
            int? stuck = client is null ? null : await CountStuckAsync(client, from, ct);
            var countersAfter = await backend.ReadCountersAsync(service?.Pid ?? Environment.ProcessId, ct);
            await StopServiceAsync();
            // A peer's sessions end with its process, so that the database publishes their counters too.
            await scenario.StopAsync();
            countersAfter = await backend.ReadCountersOnceWriterStoppedAsync(ct) ?? countersAfter;

            var samples = measurement.Samples;
            var serviceCpu = measuredPid is null ? 0 : after.ServiceCpuSeconds - before.ServiceCpuSeconds;
            var databaseCpu = backendName == "postgres" ? after.DatabaseServerCpuSeconds - before.DatabaseServerCpuSeconds : 0;
            var otherCpu = after.MachineBusyCpuSeconds - before.MachineBusyCpuSeconds - serviceCpu - databaseCpu
                           - (after.LoadClientCpuSeconds - before.LoadClientCpuSeconds);
            var notes = new List<string>(measurement.Notes);
            if (housekeeping is not null)
            {
                notes.Add("before the service started: " + housekeeping);
            }
            if (measuredPid is not null && !peakReset)
            {
                notes.Add("peak memory is the service's high-water mark since it started (/proc/<pid>/clear_refs could not reset it)");
            }

            return new ScenarioResult
            {
                Name = name,
                Scenario = scenario.Name,
                Tier = scenario.TierLabel,
                Ops = scenario.Ops,
                Concurrency = scenario.Concurrency,
                SignalWorkers = scenario.NeedsService ? scenario.SignalWorkers : null,
                DurationMs = Math.Round(measurement.Duration.TotalMilliseconds, 2),
                ThroughputPerSecond = Math.Round(samples.Count / measurement.Duration.TotalSeconds, 2),
                Latency = LatencySummary.From(samples.Where(s => s.Ok).Select(s => s.EndToEndMs)),
                Phases = samples.Where(s => s.Ok).SelectMany(s => s.Phases).GroupBy(p => p.Key)
                    .ToDictionary(g => g.Key, g => LatencySummary.From(g.Select(p => p.Value))!),
                Failures = samples.Count(s => !s.Ok),
                FailureSamples = samples.Where(s => !s.Ok).Select(s => s.Error ?? "failed").Distinct().Take(5).ToList(),
                DeadLettered = deadLettered,
                RuntimeConflicts = node?.RuntimeConflicts,
                Node = node,
                StuckInstances = stuck,
                ServiceCpuSeconds = measuredPid is null ? null : Math.Round(after.ServiceCpuSeconds - before.ServiceCpuSeconds, 2),
                ServicePeakWorkingSetBytes = measuredPid is null ? null : after.ServicePeakWorkingSetBytes,
                LoadClientCpuSeconds = Math.Round(after.LoadClientCpuSeconds - before.LoadClientCpuSeconds, 2),
                DatabaseServerCpuSeconds = backendName == "postgres" ? Math.Round(after.DatabaseServerCpuSeconds - before.DatabaseServerCpuSeconds, 2) : null,
                MachineBusyCpuSeconds = Math.Round(after.MachineBusyCpuSeconds - before.MachineBusyCpuSeconds, 2),
                OtherLoadPercent = Math.Round(Math.Clamp(100 * otherCpu / (measurement.Duration.TotalSeconds * Environment.ProcessorCount), 0, 100), 1),
                Counters = countersAfter.ToDictionary(c => c.Key, c => c.Value - countersBefore.GetValueOrDefault(c.Key)),
                CounterOps = scenario.Ops + warmUp.Ops,
                WarmUpOps = warmUp.Ops,
                WarmUpSeconds = Math.Round(warmUp.Duration.TotalSeconds, 1),
                WarmUpJitShare = warmUp.LastRoundJitShare is { } last ? Math.Round(last, 4) : null,
                WarmUpSettled = warmUp.Settled,
                ServiceJitMs = node is null ? null : Math.Round(node.JitCompilationMs, 1),
                LoadClientJitMs = Math.Round(clientJitMs, 1),
                Figures = measurement.Figures,
                Preparation = preparation,
                Notes = notes,
            };
        }
        catch (Exception e) when (e is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
        {
            // The scenario itself broke (not one of its operations): a row that says so, and the run goes on.
            Console.WriteLine($"  FAILED: {e.GetType().Name}: {e.Message}");
            if (_service is not null)
            {
                Console.WriteLine(_service.Tail(15));
            }

            return new ScenarioResult
            {
                Name = name, Scenario = scenario.Name, Tier = scenario.TierLabel, Ops = scenario.Ops, Concurrency = scenario.Concurrency,
                SignalWorkers = scenario.NeedsService ? scenario.SignalWorkers : null, DurationMs = 0, ThroughputPerSecond = 0,
                Failures = scenario.Ops, FailureSamples = [$"{e.GetType().Name}: {e.Message}"], Preparation = preparation,
            };
        }
        finally
        {
            client?.Dispose();
            front?.Dispose();
            await scenario.StopAsync();
        }
    }

    /// <summary>What the retention job deleted in the background during the measured part, where the scenario runs it.</summary>
    private static void AddRetentionFigures(Measurement measurement, Scenario scenario, NodeCounters? node)
    {
        if (node is null || !scenario.ServiceSettings.TryGetValue("Retention__EndedInstances", out var period))
        {
            return;
        }

        measurement.Figures[RetentionFigures.RowsDeleted] = node.RetentionRowsDeleted;
        measurement.Figures[RetentionFigures.RowsDeletedPerSecond] = Math.Round(node.RetentionRowsDeleted / measurement.Duration.TotalSeconds, 1);
        measurement.Notes.Add($"retention on (Retention:EndedInstances {period}, the job's defaults otherwise): the job deleted ended instances in the background during the warm-up and the measured part");
    }

    /// <summary>Wake-up messages per workflow, and the wake-up latency (signals' age at claim) p50/p99, as the nodes counted them.</summary>
    private static void AddWakeUpFigures(Measurement measurement, Scenario scenario, NodeCounters? node, NodeCounters? front)
    {
        if (node is null)
        {
            return;
        }

        if (node.AgeAtClaimPercentileMs(0.5) is { } p50 && node.AgeAtClaimPercentileMs(0.99) is { } p99)
        {
            measurement.Figures[WakeUpFigures.AgeAtClaimP50] = p50;
            measurement.Figures[WakeUpFigures.AgeAtClaimP99] = p99;
        }

        var sent = node.WakeUpsSent + (front?.WakeUpsSent ?? 0);
        if (scenario.Ops > 0 && node.WakeUpsRequested + (front?.WakeUpsRequested ?? 0) > 0)
        {
            measurement.Figures[WakeUpFigures.MessagesPerWorkflow] = Math.Round(sent / (double)scenario.Ops, 3);
        }

        if (front is not null)
        {
            measurement.Figures[WakeUpFigures.FrontWakeUpsSent] = front.WakeUpsSent;
        }
    }

    /// <summary>Waits (bounded) until every node's wake-up transport is connected, so that no hint of the run is sent into the void.</summary>
    private static async Task WaitForWakeUpsAsync(IReadOnlyList<WorkflowClient> nodes, CancellationToken ct)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        foreach (var node in nodes)
        {
            while (!(await node.GetNodeCountersAsync(ct)).WakeUpHealthy)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new InvalidOperationException("a node's wake-up transport did not connect within 60 s");
                }

                await Task.Delay(50, ct);
            }
        }
    }

    /// <summary>
    /// The backend's settings plus authentication (the run's key hash, or Authentication__Mode=None) and a per-caller rate
    /// the scenarios never reach.
    /// </summary>
    private Dictionary<string, string> ServiceEnvironment(Backend backend)
    {
        var environment = new Dictionary<string, string>(backend.ServiceEnvironment.Concat(options.ServiceRuntimeSettings))
        {
            // The whole load comes from one caller (one key), far above a caller's default rate: the limiter still runs
            // on every request (its cost is in the figures), with a bucket the scenarios never empty.
            ["RateLimiting__PermitsPerPeriod"] = "1000000",
            ["RateLimiting__Burst"] = "10000000",
        };
        if (_apiKey is null)
        {
            environment["Authentication__Mode"] = "None";
        }
        else
        {
            foreach (var (key, value) in _apiKey.ServiceEnvironment)
            {
                environment[key] = value;
            }
        }

        if (_redis is not null)
        {
            environment["WakeUp__Transport"] = "Redis";
            environment["WakeUp__Redis__ConnectionString"] = _redis;
            environment["WakeUp__Redis__Channel"] = _channel;
        }

        if (_otlp is not null)
        {
            foreach (var (key, value) in _otlp.ServiceEnvironment("workflow-bench"))
            {
                environment[key] = value;
            }
        }

        if (options.RequestLog)
        {
            // The shipped level for request events (one Information line per request, to standard output, which the runner
            // reads); the rest of the service stays at Warning as in every run.
            environment["Serilog__MinimumLevel__Override__Serilog.AspNetCore.RequestLoggingMiddleware"] = "Information";
        }

        return environment;
    }

    private ScenarioContext Context(Backend backend, WorkflowClient? client, ProgressMeter progress, CancellationToken ct, WorkflowClient? front = null) =>
        new()
        {
            Backend = backend, Options = options, Progress = progress, Cancellation = ct, Client = client!, Front = front!,
            StartService = (dll, extra, token) => StartOwnServiceAsync(backend, dll, extra, token), ApiKey = _apiKey?.Key,
        };

    /// <summary>A service process a scenario starts and stops itself, with the run's settings and the scenario's on top.</summary>
    private Task<ServiceProcess> StartOwnServiceAsync(Backend backend, string serviceDll, IReadOnlyDictionary<string, string> extra, CancellationToken ct)
    {
        var environment = ServiceEnvironment(backend);
        foreach (var (key, value) in extra)
        {
            environment[key] = value;
        }

        return ServiceProcess.StartAsync(serviceDll, environment, ColdStartScenario.WorkersPerProcess, _work!, _apiKey?.Key, ct);
    }

    /// <summary>
    /// Instances created since the scenario began (warm-up included) that are not terminal and have no pending wake-up:
    /// no Pending signal (GET /signals?status=Pending) and no open or claimed human task.
    /// </summary>
    private static async Task<int> CountStuckAsync(WorkflowClient client, DateTimeOffset from, CancellationToken ct)
    {
        var since = Uri.EscapeDataString(from.ToString("O", CultureInfo.InvariantCulture));
        var open = new List<JsonObject>();
        foreach (var status in new[] { "Running", "Waiting", "Faulted" })
        {
            open.AddRange(await client.ListAllAsync($"/instances?status={status}&createdFrom={since}", MaxListedInstances, ct));
        }

        if (open.Count == 0)
        {
            return 0;
        }

        var pending = (await client.ListAllAsync("/signals?status=Pending", MaxListedInstances, ct))
            .Select(s => Json.Text(s["instanceId"])).ToHashSet();
        var stuck = 0;
        foreach (var instance in open.Where(i => !pending.Contains(Json.Text(i["id"]))))
        {
            var tasks = await client.GetPageAsync($"/tasks?instanceId={Json.Text(instance["id"])}", ct);
            if (!tasks["items"]!.AsArray().Any(t => Json.Text(t?["status"]) is "Open" or "Claimed"))
            {
                stuck++;
            }
        }

        return stuck;
    }

    private async Task StopServiceAsync()
    {
        try
        {
            if (_front is not null)
            {
                await _front.StopAsync();
            }
        }
        finally
        {
            if (_front is not null)
            {
                await _front.DisposeAsync();
                _front = null;
            }
        }

        if (_service is not null)
        {
            var code = await _service.StopAsync();
            if (code != 0)
            {
                Console.WriteLine($"  the service exited with {code}; its log: {_service.LogPath}");
            }

            await _service.DisposeAsync();
            _service = null;
        }
    }

    private static string Summary(ScenarioResult r) =>
        FormattableString.Invariant($"  {r.ThroughputPerSecond:F1} ops/s in {r.DurationMs / 1000:F2} s; latency avg {r.Latency?.Avg:F2} p50 {r.Latency?.P50:F2} p95 {r.Latency?.P95:F2} p99 {r.Latency?.P99:F2} max {r.Latency?.Max:F2} ms; ") +
        FormattableString.Invariant($"failures {r.Failures}, dead letters {Show(r.DeadLettered)}, stuck {Show(r.StuckInstances)}, conflicts {r.RuntimeConflicts?.ToString(CultureInfo.InvariantCulture) ?? "n/a"}") +
        (r.Node is { WakeUpsRequested: > 0 } n ? FormattableString.Invariant($", wake-ups sent {n.WakeUpsSent}/{n.WakeUpsRequested}") : string.Empty) +
        (r.Figures.TryGetValue(WakeUpFigures.AgeAtClaimP50, out var age50) && r.Figures.TryGetValue(WakeUpFigures.AgeAtClaimP99, out var age99)
            ? FormattableString.Invariant($"; age at claim p50 <= {age50} p99 <= {age99} ms") : string.Empty) +
        (r.Phases.TryGetValue(CrossNodeRoundtripScenario.CommitToAnswer, out var answer)
            ? FormattableString.Invariant($"; commit to cross-node long-poll answer p50 {answer.P50:F2} p99 {answer.P99:F2} ms") : string.Empty) +
        (r.Figures.TryGetValue(IdlePollingScenario.QueriesPerSecond, out var idle) ? FormattableString.Invariant($"; idle {idle:0.##} queries/s") : string.Empty) +
        (r.ServiceCpuSeconds is { } cpu ? FormattableString.Invariant($"; service {cpu:F1} CPU s, peak {r.ServicePeakWorkingSetBytes / 1048576.0:F0} MB") : string.Empty) +
        (r.FailureSamples.Count > 0 ? $"\n  first failure: {r.FailureSamples[0]}" : string.Empty);

    private static string Show(int? value) => value?.ToString(CultureInfo.InvariantCulture) ?? "n/a";
}
