using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Events out, measured (the <c>events</c> command): a <see cref="WebhookReceiver"/> in the runner subscribed to every event
/// of signal-roundtrip. Latency: a closed loop of workflows (start, signal, completion) on one node, then on three nodes
/// sharing the database with the load spread over them; each event's latency is from the time the engine recorded it
/// (the CloudEvent's <c>time</c>, before its commit) to its arrival at the receiver, on this machine's one clock. Backlog:
/// the subscription paused while workflows pile up their events, then resumed: events delivered per second until the
/// receiver has them all.
/// </summary>
internal sealed class EventsBenchmark(RunnerOptions options, string backendName)
{
    private const int SignalWorkers = 8;
    private const int LatencyConcurrency = 16;

    /// <summary>
    /// The latency runs begin a workflow this often (100 a second, 200 events), well below what the machine sustains: the
    /// figure is the outbox's own delay, not a saturated machine's queueing.
    /// </summary>
    private static readonly TimeSpan LatencyPace = TimeSpan.FromMilliseconds(10);
    private const int BacklogConcurrency = 64;

    /// <summary>The events one signal-roundtrip workflow makes: instance.started, instance.completed.</summary>
    private const int EventsPerWorkflow = 2;

    private static readonly TimeSpan DeliveredWithin = TimeSpan.FromMinutes(10);

    private static readonly JsonSerializerOptions ReportJson = new() { WriteIndented = true };

    private readonly BenchApiKey _apiKey = BenchApiKey.Create();

    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        var work = Path.Combine(Path.GetTempPath(), $"wf-events-{backendName}-{started:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        var results = new List<EventsResult>
        {
            await LatencyAsync(1, work, cancellationToken),
        };
        if (options.CreateBackend(backendName).SharedByNodes)
        {
            results.Add(await LatencyAsync(3, work, cancellationToken));
        }

        results.Add(await BacklogAsync(work, cancellationToken));
        var (markdown, json) = Save(results, started);
        Console.WriteLine($"{backendName}: wrote {markdown} and {json}");
        return results.All(r => r.Missing == 0);
    }

    /// <summary>Workflows on <paramref name="nodeCount"/> nodes at a moderate concurrency; every event's latency.</summary>
    private async Task<EventsResult> LatencyAsync(int nodeCount, string work, CancellationToken cancellationToken)
    {
        var workflows = options.EventLatencyWorkflows;
        await using var run = await EventsRun.StartAsync(options, backendName, _apiKey, nodeCount, Path.Combine(work, $"latency-{nodeCount}"), cancellationToken);
        Console.WriteLine($"  latency on {nodeCount} node(s): {workflows:N0} workflows, one begun every {LatencyPace.TotalMilliseconds:N0} ms");
        var clock = Stopwatch.StartNew();
        await run.WorkflowsAsync(workflows, LatencyConcurrency, cancellationToken, LatencyPace);
        var expected = workflows * EventsPerWorkflow;
        var delivered = await run.UntilReceivedAsync(expected, cancellationToken);
        var receipts = run.Receiver.Receipts.Where(r => !run.Probes.Contains(r.InstanceId)).ToList();
        var latency = LatencySummary.From(receipts.Select(r => (r.ArrivedAt - r.EventTime).TotalMilliseconds));
        var result = new EventsResult($"latency, {nodeCount} node{(nodeCount == 1 ? "" : "s")}", nodeCount, expected, receipts.Count,
            Math.Max(0, expected - receipts.Select(r => r.Id).Distinct().Count()), delivered ? null : "not all events arrived", latency, null, clock.Elapsed);
        Console.WriteLine($"    p50 {latency?.P50:N1} ms, p99 {latency?.P99:N1} ms, max {latency?.Max:N1} ms; {receipts.Count:N0} received");
        return result;
    }

    /// <summary>A paused subscription's backlog of <see cref="RunnerOptions.EventBacklog"/> events, then resumed.</summary>
    private async Task<EventsResult> BacklogAsync(string work, CancellationToken cancellationToken)
    {
        var workflows = options.EventBacklog / EventsPerWorkflow;
        await using var run = await EventsRun.StartAsync(options, backendName, _apiKey, 1, Path.Combine(work, "backlog"), cancellationToken);
        await run.Client.PauseOrResumeAsync(run.SubscriptionId, pause: true, cancellationToken);
        Console.WriteLine($"  backlog: {workflows:N0} workflows with the subscription paused");
        await run.WorkflowsAsync(workflows, BacklogConcurrency, cancellationToken);
        var before = run.Receiver.Count;
        var clock = Stopwatch.StartNew();
        await run.Client.PauseOrResumeAsync(run.SubscriptionId, pause: false, cancellationToken);
        var expected = workflows * EventsPerWorkflow;
        var delivered = await run.UntilReceivedAsync(expected, cancellationToken);
        var took = clock.Elapsed;
        var receipts = run.Receiver.Receipts.Skip(before).Where(r => !run.Probes.Contains(r.InstanceId)).ToList();
        var perSecond = receipts.Count / took.TotalSeconds;
        Console.WriteLine($"    {receipts.Count:N0} events in {took.TotalSeconds:N1} s: {perSecond:N0}/s");
        return new EventsResult("backlog, 1 node", 1, expected, receipts.Count, Math.Max(0, expected - receipts.Select(r => r.Id).Distinct().Count()),
            delivered ? null : "not all events arrived", null, perSecond, took);
    }

    private (string Markdown, string Json) Save(IReadOnlyList<EventsResult> results, DateTimeOffset started)
    {
        Directory.CreateDirectory(options.OutputDirectory);
        var stem = Path.Combine(options.OutputDirectory, string.Create(CultureInfo.InvariantCulture, $"events-{backendName}-{started:yyyy-MM-dd}"));
        File.WriteAllText(stem + ".json", JsonSerializer.Serialize(new { backend = backendName, started, machine = MachineFacts.Summary(), commit = MachineFacts.CodeCommit(options.RepositoryRoot), results }, ReportJson));
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"# Events out on {backendName}, {started:yyyy-MM-dd}");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Run on {MachineFacts.Summary()}. A receiver in the runner's process (Kestrel, answering 200 at once) is subscribed to every event of signal-roundtrip (instance.started, instance.completed).");
        md.AppendLine("Latency is from the event's `time` (recorded by the engine before its commit) to its arrival, on this machine's clock.");
        md.AppendLine(CultureInfo.InvariantCulture, $"Latency runs: {options.EventLatencyWorkflows:N0} workflows, one begun every {LatencyPace.TotalMilliseconds:N0} ms (at most {LatencyConcurrency} under way), the load spread over the nodes. Backlog: {options.EventBacklog:N0} events written with the subscription paused, then resumed; the service's defaults (Events:ClaimBatch, Events:MaxConcurrentDeliveries).");
        md.AppendLine();
        md.AppendLine("| run | nodes | events expected | received | missing | p50 ms | p99 ms | max ms | delivered/s | took s |");
        md.AppendLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var r in results)
        {
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| {r.Run} | {r.Nodes} | {r.Expected:N0} | {r.Received:N0} | {r.Missing:N0} | {r.Latency?.P50:N1} | {r.Latency?.P99:N1} | {r.Latency?.Max:N1} | {r.DeliveredPerSecond:N0} | {r.Took.TotalSeconds:N1} |");
        }

        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture,
            $"Repeat: `dotnet run -c Release --project tests/WorkflowService.Benchmarks -- events --backend {backendName}` (add `--postgres \"...\"` for another server).");
        File.WriteAllText(stem + ".md", md.ToString());
        return (stem + ".md", stem + ".json");
    }

    /// <summary>One measured run: a fresh database, its nodes, the receiver and the subscription.</summary>
    private sealed class EventsRun : IAsyncDisposable
    {
        private readonly List<ServiceProcess> _nodes = [];
        private readonly List<WorkflowClient> _clients = [];
        private Backend _backend = null!;
        private int _probeEvents;

        public WebhookReceiver Receiver { get; private set; } = null!;

        public WorkflowClient Client => _clients[0];

        public string SubscriptionId { get; private set; } = "";

        /// <summary>The instances that made sure every node knows the subscription; left out of the figures.</summary>
        public HashSet<Guid> Probes { get; } = [];

        public static async Task<EventsRun> StartAsync(RunnerOptions options, string backendName, BenchApiKey apiKey, int nodeCount, string work, CancellationToken cancellationToken)
        {
            var run = new EventsRun();
            try
            {
                run.Receiver = await WebhookReceiver.StartAsync(cancellationToken);
                run._backend = options.CreateBackend(backendName);
                await run._backend.ProvisionAsync(work, cancellationToken);
                var environment = new Dictionary<string, string>(run._backend.ServiceEnvironment)
                {
                    ["RateLimiting__PermitsPerPeriod"] = "1000000",
                    ["RateLimiting__Burst"] = "10000000",
                };
                foreach (var (key, value) in apiKey.ServiceEnvironment.Concat(run.Receiver.ServiceSettings))
                {
                    environment[key] = value;
                }

                for (var i = 0; i < nodeCount; i++)
                {
                    environment["Workers__NodeId"] = $"node-{i}";
                    var node = await ServiceProcess.StartAsync(options.ServiceDll, environment, SignalWorkers, Path.Combine(work, $"node-{i}"),
                        apiKey.Key, cancellationToken);
                    run._nodes.Add(node);
                    run._clients.Add(new WorkflowClient(node.Address, BacklogConcurrency, apiKey.Key));
                }

                await run.Client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(options.RepositoryRoot, "docs/examples/signal-roundtrip.json"), cancellationToken),
                    cancellationToken);
                var subscription = await run.Client.SubscribeAsync("bench-receiver", run.Receiver.Url, [SignalRoundtripScenario.Definition], cancellationToken);
                run.SubscriptionId = (string)subscription["subscription"]!["id"]!;
                run.Receiver.UseSecret((string)subscription["secret"]!);
                run.Probes.UnionWith(await run.Receiver.ProbeEveryNodeAsync(run._clients, SignalRoundtripScenario.Definition, null, cancellationToken));
                run._probeEvents = run.Receiver.DistinctCount;
                return run;
            }
            catch
            {
                await run.DisposeAsync();
                throw;
            }
        }

        /// <summary>
        /// Runs <paramref name="count"/> workflows (start, signal, completion) on <paramref name="concurrency"/> workers, taking
        /// the nodes in turn; with <paramref name="pace"/>, workflow i begins no sooner than i × pace after the first.
        /// </summary>
        public async Task WorkflowsAsync(int count, int concurrency, CancellationToken cancellationToken, TimeSpan? pace = null)
        {
            var next = -1;
            var began = Stopwatch.StartNew();
            await Task.WhenAll(Enumerable.Range(0, concurrency).Select(async _ =>
            {
                int i;
                while ((i = Interlocked.Increment(ref next)) < count)
                {
                    if (pace is { } every && every * i - began.Elapsed is { Ticks: > 0 } early)
                    {
                        // The schedule of an open-loop load: the next workflow's start time.
                        await Task.Delay(early, cancellationToken);
                    }

                    var client = _clients[i % _clients.Count];
                    var id = Guid.Parse((string)(await client.StartAsync(SignalRoundtripScenario.Definition, null, cancellationToken))["id"]!);
                    await client.SignalAsync(id, "go", new { i }, cancellationToken);
                    await client.WaitForCompletionAsync(id, cancellationToken);
                }
            }));
        }

        /// <summary>Until the receiver has <paramref name="expected"/> distinct events besides the probes' (at most <see cref="DeliveredWithin"/>).</summary>
        public async Task<bool> UntilReceivedAsync(int expected, CancellationToken cancellationToken)
        {
            var waited = Stopwatch.StartNew();
            while (waited.Elapsed < DeliveredWithin)
            {
                if (Receiver.DistinctCount >= _probeEvents + expected)
                {
                    return true;
                }

                await Task.Delay(20, cancellationToken);
            }

            return false;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (var client in _clients)
            {
                client.Dispose();
            }

            foreach (var node in _nodes)
            {
                await node.DisposeAsync();
            }

            if (_backend is not null)
            {
                await _backend.DisposeAsync();
            }

            if (Receiver is not null)
            {
                await Receiver.DisposeAsync();
            }
        }
    }
}

/// <summary>One row of the events report.</summary>
internal sealed record EventsResult(string Run, int Nodes, int Expected, int Received, int Missing, string? Problem, LatencySummary? Latency,
    double? DeliveredPerSecond, TimeSpan Took);
