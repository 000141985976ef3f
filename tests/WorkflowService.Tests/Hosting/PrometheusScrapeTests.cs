using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json.Nodes;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// The metrics as a real collector sees them: Debian's Prometheus scrapes a node's scrape endpoint with an operator's API
/// key (in the Authorization header, the only one Prometheus can set), and its query API shows the engine's instruments
/// under the names, units and labels docs/operations.md gives, counting the work the test did.
/// </summary>
public sealed class PrometheusScrapeTests
{
    private const string ScrapePath = "/metrics/prometheus";

    [Fact]
    public async Task Prometheus_scrapes_the_engines_metrics_with_their_names_units_and_labels()
    {
        var prometheus = ExternalTools.OnPath("prometheus", "prometheus", "install Debian's prometheus package (apt-get install prometheus)");
        var directory = Directory.CreateTempSubdirectory("workflow-prometheus-").FullName;
        var scraper = TestApiKey.Create("prometheus", "operator");
        await using var node = await TestServiceProcess.StartAsync("scraped", new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={Path.Combine(directory, "workflow.db")}",
            ["Telemetry:Prometheus:Enabled"] = "true",
            ["Telemetry:InstanceCountInterval"] = "00:00:02",
            // Signals queued for the workers, so that the claim's instruments have claims to measure.
            ["Engine:ApplySignalsOnArrival"] = "false",
            // The node's own admin key is Authentication:ApiKeys:0.
            ["Authentication:ApiKeys:1:Name"] = scraper.Name,
            ["Authentication:ApiKeys:1:Hash"] = scraper.Hash,
            ["Authentication:ApiKeys:1:Roles:0"] = "operator",
        });
        using var client = node.CreateClient();

        // The work the collector must see counted.
        await new ApiClient(client).CompleteRoundtripsAsync("scraped", 3);

        var keyFile = Path.Combine(directory, "scraper.key");
        await File.WriteAllTextAsync(keyFile, scraper.Key, TestContext.Current.CancellationToken);
        var config = Path.Combine(directory, "prometheus.yml");
        await File.WriteAllTextAsync(config, $"""
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
            scrape_configs:
              - job_name: workflow
                metrics_path: {ScrapePath}
                authorization:
                  type: ApiKey
                  credentials_file: {keyFile}
                static_configs:
                  - targets: ['{node.Address.Authority}']
            """, TestContext.Current.CancellationToken);
        var port = LoopbackPort.Free();
        await using var log = new StreamWriter(Path.Combine(directory, "prometheus.log")) { AutoFlush = true };
        using var server = StartPrometheus(prometheus, config, Path.Combine(directory, "data"), port, log);
        try
        {
            using var query = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(10) };

            // Scraped, with the key: the target is up, and the samples count at least this test's work.
            await Eventually.WaitUntilAsync(async () => await ValueAsync(query, "sum(workflow_signals_handled_total)") >= 3,
                TimeSpan.FromSeconds(60), "Prometheus to have scraped the node's handled signals");
            Assert.Equal(1, await ValueAsync(query, "up{job=\"workflow\"}"));
            Assert.True(await ValueAsync(query, "sum(workflow_signals_accepted_total)") >= 3);
            Assert.True(await ValueAsync(query, "sum(workflow_instances_started_total)") >= 3);

            // Durations in seconds, as histograms; the counts of things without a unit suffix.
            Assert.True(await ValueAsync(query, "sum(workflow_run_duration_seconds_count)") >= 3);
            Assert.True(await ValueAsync(query, "sum(workflow_commit_duration_seconds_count)") >= 6);
            Assert.True(await ValueAsync(query, "sum(workflow_signal_age_at_claim_seconds_count)") >= 3);
            Assert.True(await ValueAsync(query, "sum(workflow_claim_batch_size_count)") >= 1);
            Assert.True(await ValueAsync(query, "sum(workflow_commit_group_size_count)") >= 1);
            Assert.True(await ValueAsync(query, "sum(http_server_request_duration_seconds_count)") >= 1);

            // The instances gauge, one series per status: the three this test completed are counted.
            await Eventually.WaitUntilAsync(async () => await ValueAsync(query, "workflow_instances{workflow_instance_status=\"Completed\"}") >= 3,
                TimeSpan.FromSeconds(60), "the instances gauge to count the completed instances");
            Assert.Equal(Enum.GetValues<InstanceStatus>().Length, await ValueAsync(query, "count(workflow_instances)"));

            // Types and units as Prometheus recorded them from the exposition.
            var metadata = await GetAsync(query, "/api/v1/metadata");
            Assert.Equal("histogram", (string?)metadata["workflow_run_duration_seconds"]![0]!["type"]);
            Assert.Equal("seconds", (string?)metadata["workflow_run_duration_seconds"]![0]!["unit"]);
            Assert.Equal("counter", (string?)metadata["workflow_signals_handled"]?[0]?["type"] ?? (string?)metadata["workflow_signals_handled_total"]?[0]?["type"]);
            Assert.Equal("gauge", (string?)metadata["workflow_instances"]![0]!["type"]);
        }
        finally
        {
            server.Kill(entireProcessTree: true);
            await server.WaitForExitAsync(CancellationToken.None);
        }
    }

    [Fact]
    public async Task The_scrape_endpoint_is_for_operators_of_the_default_tenant_only()
    {
        var directory = Directory.CreateTempSubdirectory("workflow-prometheus-").FullName;
        var tenantOperator = TestApiKey.ForTenant("acme", "acme-operator", "operator");
        var application = TestApiKey.Create("app", "application");
        await using var node = await TestServiceProcess.StartAsync("scrape-guarded", new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={Path.Combine(directory, "workflow.db")}",
            ["Telemetry:Prometheus:Enabled"] = "true",
            ["Authentication:ApiKeys:1:Name"] = tenantOperator.Name,
            ["Authentication:ApiKeys:1:Hash"] = tenantOperator.Hash,
            ["Authentication:ApiKeys:1:Tenant"] = "acme",
            ["Authentication:ApiKeys:1:Roles:0"] = "operator",
            ["Authentication:ApiKeys:2:Name"] = application.Name,
            ["Authentication:ApiKeys:2:Hash"] = application.Hash,
            ["Authentication:ApiKeys:2:Roles:0"] = "application",
        });
        using var http = new HttpClient { BaseAddress = node.Address };

        Assert.Equal(HttpStatusCode.Unauthorized, await StatusAsync(http, null));
        Assert.Equal(HttpStatusCode.Unauthorized, await StatusAsync(http, "ApiKey not-a-key"));
        Assert.Equal(HttpStatusCode.Unauthorized, await StatusAsync(http, "ApiKey "));
        Assert.Equal(HttpStatusCode.Forbidden, await StatusAsync(http, $"ApiKey {application.Key}"));
        Assert.Equal(HttpStatusCode.Forbidden, await StatusAsync(http, $"ApiKey {tenantOperator.Key}"));
        Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, $"ApiKey {node.ApiKey}"));
    }

    private static async Task<HttpStatusCode> StatusAsync(HttpClient http, string? authorization)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, ScrapePath);
        if (authorization is not null)
        {
            request.Headers.TryAddWithoutValidation("Authorization", authorization);
        }

        using var response = await http.SendAsync(request, TestContext.Current.CancellationToken);
        return response.StatusCode;
    }

    /// <summary>The single value of an instant query, or -1 when it has none (not scraped yet, or Prometheus not up yet).</summary>
    private static async Task<double> ValueAsync(HttpClient query, string promql)
    {
        JsonNode data;
        try
        {
            data = await GetAsync(query, $"/api/v1/query?query={Uri.EscapeDataString(promql)}");
        }
        catch (HttpRequestException)
        {
            return -1;
        }

        var result = data["result"]!.AsArray();
        return result.Count == 0 ? -1 : double.Parse((string)result[0]!["value"]![1]!, CultureInfo.InvariantCulture);
    }

    private static async Task<JsonNode> GetAsync(HttpClient query, string path)
    {
        var body = JsonNode.Parse(await query.GetStringAsync(path, TestContext.Current.CancellationToken))!;
        Assert.Equal("success", (string?)body["status"]);
        return body["data"]!;
    }

    private static Process StartPrometheus(string prometheus, string config, string data, int port, StreamWriter writer)
    {
        var start = new ProcessStartInfo(prometheus)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in new[]
                 {
                     $"--config.file={config}", $"--storage.tsdb.path={data}", $"--web.listen-address=127.0.0.1:{port}",
                 })
        {
            start.ArgumentList.Add(argument);
        }

        var process = Process.Start(start)!;
        var writing = new Lock();
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (writing) writer.WriteLine(e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (writing) writer.WriteLine(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }
}
