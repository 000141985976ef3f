using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// forEach, measured (the <c>foreach</c> command, issue #40): instances of a forEach over 100 items (by default), every item
/// open at once and waiting for its own signal <c>go#&lt;index&gt;</c>; every item signalled by a bounded set of concurrent
/// callers, item k of every instance before item k + 1 of any. Items/s from the first signal to the last instance
/// completed; each item's latency from its signal's acceptance (the signal's row) to its ItemEnded event, both on the
/// store's clock; commits per item from the store: the instances' versions (one per commit) and the database's counters.
/// </summary>
internal sealed class ForEachBenchmark(RunnerOptions options, string backendName)
{
    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/bench-foreach.json";
    private const string Definition = "bench-foreach";
    private const string Signal = "go";
    private const int WarmUpInstances = 2;

    /// <summary>How long every instance has to complete after the last signal was accepted.</summary>
    private static readonly TimeSpan CompletedWithin = TimeSpan.FromMinutes(5);

    private readonly BenchApiKey _apiKey = BenchApiKey.Create();

    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        var work = Path.Combine(Path.GetTempPath(), $"wf-foreach-{backendName}-{started:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        var (instances, items, concurrency) = (options.ForEachInstances, options.ForEachItems, options.ForEachConcurrency);
        Console.WriteLine($"{backendName}: forEach, {instances:N0} instances × {items:N0} items, {concurrency} signals in flight; logs in {work}");
        await using var node = await BenchNode.StartAsync(options, backendName, _apiKey, work, concurrency, new Dictionary<string, string>(), [DefinitionFile], cancellationToken);
        var pid = node.Service!.Pid;

        // The same shape, smaller and unmeasured: the JIT, the pools and the definition cache warm.
        var warm = await StartAsync(node.Client, WarmUpInstances, items, cancellationToken);
        await SignalEveryItemAsync(node.Client, warm, items, concurrency, cancellationToken);
        foreach (var id in warm)
        {
            await UntilCompletedAsync(node.Client, id, cancellationToken);
        }

        var countersBefore = await node.Backend.ReadCountersAsync(pid, cancellationToken);
        var nodeBefore = await node.Client.GetNodeCountersAsync(cancellationToken);
        var ids = await StartAsync(node.Client, instances, items, cancellationToken);
        var clock = Stopwatch.StartNew();
        var total = instances * items;
        var (failures, firstFailure) = await SignalEveryItemAsync(node.Client, ids, items, concurrency, cancellationToken);
        var signalled = clock.Elapsed;
        var incomplete = 0;
        foreach (var id in ids)
        {
            incomplete += await UntilCompletedAsync(node.Client, id, cancellationToken) ? 0 : 1;
        }

        var took = clock.Elapsed;
        var nodeAfter = (await node.Client.GetNodeCountersAsync(cancellationToken)).Minus(nodeBefore);
        var countersRunning = await node.Backend.ReadCountersAsync(pid, cancellationToken);
        await node.StopServiceAsync();
        var countersAfter = await node.Backend.ReadCountersOnceWriterStoppedAsync(cancellationToken) ?? countersRunning;
        var counters = countersAfter.ToDictionary(c => c.Key, c => c.Value - countersBefore.GetValueOrDefault(c.Key), StringComparer.Ordinal);

        await using var store = await node.Backend.OpenStoreReaderAsync(cancellationToken);
        var accepted = (await store.ReadSignalArrivalsAsync(Signal + "#", cancellationToken)).ToDictionary(s => (s.InstanceId, s.Name), s => s.CreatedAt);
        var ended = (await store.ReadEventsAsync("ItemEnded", cancellationToken)).Where(e => ids.Contains(e.InstanceId)).ToList();
        var latencies = ended.Select(e => (e.InstanceId, Name: $"{Signal}#{IndexOf(e.DataJson)}", e.At))
            .Where(e => accepted.ContainsKey((e.InstanceId, e.Name)))
            .Select(e => (e.At - accepted[(e.InstanceId, e.Name)]).TotalMilliseconds).ToList();
        var snapshot = await store.ReadAsync(cancellationToken);
        var versions = snapshot.Instances.Where(i => ids.Contains(i.Id)).Sum(i => i.Version);

        var result = new ForEachResult(instances, items, concurrency, total, ended.Count, failures, incomplete,
            Math.Round(total / took.TotalSeconds, 1), Math.Round(total / signalled.TotalSeconds, 1), Math.Round(took.TotalSeconds, 2),
            LatencySummary.From(latencies), Math.Round(versions / (double)total, 3), nodeAfter.RuntimeConflicts,
            counters.ToDictionary(c => c.Key, c => Math.Round(c.Value / (double)total, 3), StringComparer.Ordinal), firstFailure);
        Console.WriteLine($"  {result.ItemsEnded:N0} items ended of {total:N0}: {result.ItemsPerSecond:N1} items/s; item latency p50 {result.ItemLatency?.P50:N1} p99 {result.ItemLatency?.P99:N1} ms; {result.CommitsPerItem:N2} instance commits per item; {result.RuntimeConflicts:N0} runtime conflicts");
        var (markdown, json) = BenchReportFiles.Save(options, "foreach", backendName, started, result, Render(result, started));
        Console.WriteLine($"{backendName}: wrote {markdown} and {json}");
        return failures == 0 && incomplete == 0 && result.ItemsEnded == total;
    }

    private static async Task<List<Guid>> StartAsync(WorkflowClient client, int instances, int items, CancellationToken cancellationToken)
    {
        var ids = new List<Guid>();
        for (var i = 0; i < instances; i++)
        {
            ids.Add(Json.Id(await client.StartAsync(Definition, new { items = Enumerable.Range(0, items).ToArray() }, cancellationToken)));
        }

        return ids;
    }

    /// <summary>Signals item k of every instance before item k + 1 of any, <paramref name="concurrency"/> at once; the errors, and the first.</summary>
    private static async Task<(int Failures, string? First)> SignalEveryItemAsync(WorkflowClient client, List<Guid> ids, int items, int concurrency,
        CancellationToken cancellationToken)
    {
        var next = -1;
        var failures = 0;
        string? first = null;
        await Task.WhenAll(Enumerable.Range(0, concurrency).Select(async _ =>
        {
            int k;
            while ((k = Interlocked.Increment(ref next)) < ids.Count * items)
            {
                try
                {
                    await client.SignalAsync(ids[k % ids.Count], string.Create(CultureInfo.InvariantCulture, $"{Signal}#{k / ids.Count}"), new { k }, cancellationToken);
                }
                catch (ApiCallException e)
                {
                    Interlocked.Increment(ref failures);
                    Interlocked.CompareExchange(ref first, e.Message, null);
                }
            }
        }));
        return (failures, first);
    }

    /// <summary>Long-polls the instance until it completed, at most <see cref="CompletedWithin"/>.</summary>
    private static async Task<bool> UntilCompletedAsync(WorkflowClient client, Guid id, CancellationToken cancellationToken)
    {
        var waited = Stopwatch.StartNew();
        while (waited.Elapsed < CompletedWithin)
        {
            var instance = await client.WaitForCompletionAsync(id, cancellationToken);
            if (Json.Text(instance["status"]) is not ("Running" or "Waiting"))
            {
                return Json.NotCompleted(instance) is null;
            }
        }

        return false;
    }

    private static string IndexOf(string? itemEnded)
    {
        using var data = JsonDocument.Parse(itemEnded ?? "{}");
        return data.RootElement.TryGetProperty("index", out var index) ? index.GetRawText() : "?";
    }

    private string Render(ForEachResult r, DateTimeOffset started)
    {
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"# forEach on {backendName}, {started:yyyy-MM-dd}");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Run on {MachineFacts.Summary()}; load client, service and database on this one machine. Command:");
        md.AppendLine();
        md.AppendLine("```bash").AppendLine(BenchReportFiles.CommandLine).AppendLine("```");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"One node with the service's defaults. `{Definition}` ({DefinitionFile}) has a forEach over `input.items`, every item open at once, each waiting for its own signal `go#<index>` ([foreach.md](../foreach.md)). {r.Instances:N0} instances of {r.Items:N0} items are started (after {WarmUpInstances} unmeasured ones of the same shape), then every item is signalled by {r.Concurrency} concurrent callers, item k of every instance before item k + 1 of any.");
        md.AppendLine();
        md.AppendLine("- **items/s**: items over the time from the first signal to the last instance completed (the long-poll); *accepted/s* over the signalling alone.");
        md.AppendLine("- **item latency**: from the signal's acceptance (its row's creation) to the item's `ItemEnded` event, both on the store's clock, read from the store.");
        md.AppendLine("- **instance commits per item**: the instances' versions (one per commit: the start, each signal applied, the end) over the items.");
        md.AppendLine("- **database counters per item**: from before the starts to after the service stopped, so the starts, the completions and the node's idle polls are in them; PostgreSQL counts transactions and rows, SQLite bytes written.");
        md.AppendLine();
        md.AppendLine("| instances × items | signals in flight | items ended | signal errors | not completed | items/s | accepted/s | took s | item latency p50 ms | p99 ms | max ms | instance commits per item | runtime conflicts |");
        md.AppendLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        md.AppendLine(CultureInfo.InvariantCulture,
            $"| {r.Instances:N0} × {r.Items:N0} | {r.Concurrency} | {r.ItemsEnded:N0} | {r.SignalErrors} | {r.NotCompleted} | {r.ItemsPerSecond:N1} | {r.AcceptedPerSecond:N1} | {r.Seconds:N1} | {r.ItemLatency?.P50:N1} | {r.ItemLatency?.P99:N1} | {r.ItemLatency?.Max:N1} | {r.CommitsPerItem:N2} | {r.RuntimeConflicts:N0} |");
        md.AppendLine();
        md.AppendLine("Database counters per item: " + string.Join(", ", r.CountersPerItem.Select(c => string.Create(CultureInfo.InvariantCulture, $"{c.Key} {c.Value:0.###}"))) + ".");
        if (r.FirstSignalError is { } error)
        {
            md.AppendLine().AppendLine(CultureInfo.InvariantCulture, $"First signal error: {error}");
        }

        return md.ToString();
    }

    private sealed record ForEachResult(int Instances, int Items, int Concurrency, int Signalled, int ItemsEnded, int SignalErrors, int NotCompleted,
        double ItemsPerSecond, double AcceptedPerSecond, double Seconds, LatencySummary? ItemLatency, double CommitsPerItem, long RuntimeConflicts,
        IReadOnlyDictionary<string, double> CountersPerItem, string? FirstSignalError);
}
