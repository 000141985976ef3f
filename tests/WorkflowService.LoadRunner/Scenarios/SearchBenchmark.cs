using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using WorkflowService.Engine.Search;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Search over many instances (the <c>search</c> command): claim-search published with three attributes (region, amount,
/// submittedAt), a few instances started through the API so the tenant's names have their slots, then
/// <see cref="RunnerOptions.SearchInstances"/> copies of one of them seeded straight into the store. Three filters a user
/// would write, and the counts by region, each timed through GET /instances serially after a warm-up: the first page and a
/// deep keyset page. Each filter's plan is the store's own statement, explained by the database.
/// </summary>
internal sealed class SearchBenchmark(RunnerOptions options, string backendName)
{
    private const string Definition = "claim-search";
    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/claim-search.json";
    private const string TemplateKey = "api-0";
    private const int ApiInstances = 5;
    private const int PageSize = 50;
    private const int WarmUpRequests = 20;

    /// <summary>The deep page: this many pages in, following each page's next cursor (or the last page, when fewer match).</summary>
    private const int DeepPage = 20;

    /// <summary>The goal of issue #40 for each filter's page.</summary>
    private const double GoalP99Ms = 50;

    private static readonly string[] Regions = ["EU", "US", "UK", "APAC", "LATAM"];

    /// <summary>The filters a user would write, each with its order (null: the list's own, newest first).</summary>
    private static readonly IReadOnlyList<(string Name, string Filter, string? OrderBy)> Filters =
    [
        ("open EU claims over 10,000", "amount > 10000 and region = \"EU\" and status = \"running\"", null),
        ("EU and UK submitted since November", "region in (\"EU\", \"UK\") and submittedAt >= \"2026-11-01T00:00:00Z\"", "submittedAt desc"),
        ("amounts 19,990 to 20,000", "amount between 19990 and 20000", null),
    ];

    private static readonly JsonSerializerOptions ReportJson = new(JsonSerializerDefaults.Web) { WriteIndented = true };

    private readonly BenchApiKey _apiKey = BenchApiKey.Create();

    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        var work = Path.Combine(Path.GetTempPath(), $"wf-search-{backendName}-{started:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        await using var backend = options.CreateBackend(backendName);
        await backend.ProvisionAsync(work, cancellationToken);
        var environment = new Dictionary<string, string>(backend.ServiceEnvironment)
        {
            ["RateLimiting__PermitsPerPeriod"] = "1000000",
            ["RateLimiting__Burst"] = "10000000",
        };
        foreach (var (key, value) in _apiKey.ServiceEnvironment)
        {
            environment[key] = value;
        }

        await using var service = await ServiceProcess.StartAsync(options.ServiceDll, environment, 8, Path.Combine(work, "node-0"), _apiKey.Key, cancellationToken);
        using var client = new WorkflowClient(service.Address, 4, _apiKey.Key);
        await client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(options.RepositoryRoot, DefinitionFile), cancellationToken), cancellationToken);
        for (var i = 0; i < ApiInstances; i++)
        {
            var input = new { region = Regions[i % Regions.Length], amount = 1000 * (i + 1), submittedAt = $"2026-11-{i + 1:00}T09:00:00Z" };
            await client.StartAsync(Definition, input, cancellationToken, businessKey: $"api-{i}");
        }

        Console.WriteLine($"{backendName}: seeding {options.SearchInstances:N0} instances");
        await using var store = await backend.OpenSearchStoreAsync(cancellationToken);
        var seed = await store.SeedAsync(TemplateKey, options.SearchInstances, ("region", "amount", "submittedAt"), cancellationToken);
        Console.WriteLine($"  {seed}");

        var rows = new List<SearchResult>();
        var plans = new List<SearchPlan>();
        foreach (var (name, filter, orderBy) in Filters)
        {
            var path = $"/instances?filter={Uri.EscapeDataString(filter)}{(orderBy is null ? "" : "&orderBy=" + Uri.EscapeDataString(orderBy))}&limit={PageSize}";
            var first = await TimeAsync(client, path, cancellationToken);
            rows.Add(Row(name, "first page", 1, first));
            var (depth, deepPath) = await DeepPathAsync(client, path, cancellationToken);
            rows.Add(Row(name, "deep page", depth, await TimeAsync(client, deepPath, cancellationToken)));
            plans.Add(new SearchPlan(name, filter, orderBy,
                await store.ExplainAsync(filter, orderBy, PageSize, new SearchOptions().MaxTotal, cancellationToken)));
        }

        rows.Add(Row("counts by region", "GET /instances/counts?by=region", 1, await TimeAsync(client, "/instances/counts?by=region", cancellationToken)));
        var facts = await backend.ReadFactsAsync(cancellationToken);
        var (markdown, json) = Save(rows, plans, seed, facts, started);
        Console.WriteLine($"{backendName}: wrote {markdown} and {json}");
        return rows.All(r => r.Failures == 0);
    }

    private static SearchResult Row(string name, string page, int depth, (LatencySummary? Latency, int Total, int Failures) timed)
    {
        Console.WriteLine($"  {name}, {page}: p50 {timed.Latency?.P50:N1} ms, p99 {timed.Latency?.P99:N1} ms, max {timed.Latency?.Max:N1} ms; total {timed.Total:N0}");
        return new SearchResult(name, page, depth, timed.Total, timed.Latency, timed.Failures);
    }

    /// <summary>The request <see cref="RunnerOptions.SearchRequests"/> times in a row after a warm-up; the total it reports.</summary>
    private async Task<(LatencySummary? Latency, int Total, int Failures)> TimeAsync(WorkflowClient client, string path, CancellationToken cancellationToken)
    {
        for (var i = 0; i < WarmUpRequests; i++)
        {
            await client.GetPageAsync(path, cancellationToken);
        }

        var samples = new List<double>(options.SearchRequests);
        var total = 0;
        var failures = 0;
        for (var i = 0; i < options.SearchRequests; i++)
        {
            var clock = Stopwatch.StartNew();
            try
            {
                var page = await client.GetPageAsync(path, cancellationToken);
                samples.Add(clock.Elapsed.TotalMilliseconds);
                total = page["total"] is JsonValue value ? (int)value : 0;
            }
            catch (ApiCallException e)
            {
                failures++;
                Console.WriteLine($"    {path}: {e.Message}");
            }
        }

        return (LatencySummary.From(samples), total, failures);
    }

    /// <summary>The path of page <see cref="DeepPage"/> (or the last), found by following next cursors once.</summary>
    private static async Task<(int Depth, string Path)> DeepPathAsync(WorkflowClient client, string path, CancellationToken cancellationToken)
    {
        var current = path;
        var depth = 1;
        while (depth < DeepPage && (string?)(await client.GetPageAsync(current, cancellationToken))["next"] is { } next)
        {
            current = $"{path}&after={Uri.EscapeDataString(next)}";
            depth++;
        }

        return (depth, current);
    }

    private (string Markdown, string Json) Save(IReadOnlyList<SearchResult> rows, IReadOnlyList<SearchPlan> plans, string seed,
        IReadOnlyDictionary<string, string> facts, DateTimeOffset started)
    {
        Directory.CreateDirectory(options.OutputDirectory);
        var stem = Path.Combine(options.OutputDirectory, string.Create(CultureInfo.InvariantCulture, $"search-{backendName}-{started:yyyy-MM-dd}"));
        File.WriteAllText(stem + ".json", JsonSerializer.Serialize(new
        {
            backend = backendName, started, machine = MachineFacts.Summary(), commit = MachineFacts.CodeCommit(options.RepositoryRoot), database = facts,
            instances = options.SearchInstances, requests = options.SearchRequests, seed, results = rows, plans,
        }, ReportJson));
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"# Search over {options.SearchInstances:N0} instances on {backendName}, {started:yyyy-MM-dd}");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Run on {MachineFacts.Summary()}; {string.Join(", ", facts.Select(f => $"{f.Key} {f.Value}"))}.");
        md.AppendLine(CultureInfo.InvariantCulture, $"Seed: {seed}");
        md.AppendLine(CultureInfo.InvariantCulture,
            $"Each request through the API (GET /instances, limit {PageSize}, the service's Search:MaxTotal for the total), one at a time: {WarmUpRequests} to warm up, then {options.SearchRequests:N0} timed. The deep page is page {DeepPage} (or the last), reached by following `next`. Goal: p99 ≤ {GoalP99Ms:N0} ms.");
        md.AppendLine();
        md.AppendLine("| filter | page | page no. | total | p50 ms | p99 ms | max ms | failures | goal |");
        md.AppendLine("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        foreach (var r in rows)
        {
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| {r.Filter} | {r.Page} | {r.Depth} | {r.Total:N0} | {r.Latency?.P50:N1} | {r.Latency?.P99:N1} | {r.Latency?.Max:N1} | {r.Failures} | {(r.Latency?.P99 <= GoalP99Ms ? "met" : "missed")} |");
        }

        md.AppendLine();
        md.AppendLine(backendName == "postgres"
            ? "## Plans (EXPLAIN (ANALYZE, BUFFERS) of the store's statements, first page)"
            : "## Plans (EXPLAIN QUERY PLAN of the store's statements, first page)");
        foreach (var plan in plans)
        {
            md.AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture, $"### {plan.Name}: `{plan.Filter}`{(plan.OrderBy is null ? "" : $", orderBy `{plan.OrderBy}`")}");
            md.AppendLine();
            md.AppendLine("```");
            md.AppendLine(plan.Text.TrimEnd());
            md.AppendLine("```");
        }

        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture,
            $"Repeat: `dotnet run -c Release --project tests/WorkflowService.Benchmarks -- search --backend {backendName} --instances {options.SearchInstances} --requests {options.SearchRequests}`.");
        File.WriteAllText(stem + ".md", md.ToString());
        return (stem + ".md", stem + ".json");
    }
}

/// <summary>One row of the search report: a filter's page, timed.</summary>
internal sealed record SearchResult(string Filter, string Page, int Depth, int Total, LatencySummary? Latency, int Failures);

/// <summary>A filter's plan as the database gave it.</summary>
internal sealed record SearchPlan(string Name, string Filter, string? OrderBy, string Text);
