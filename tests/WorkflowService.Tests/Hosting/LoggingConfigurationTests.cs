using System.Diagnostics;
using System.Net;
using System.Text;
using System.Text.Json.Nodes;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// Logging as an operator configures it, run as the real process: compact JSON chosen with the one documented setting
/// gives one JSON object per line and per event, a request line per request with its route, status and duration, and the
/// caller's W3C trace id in both the request line and the problem details it receives.
/// </summary>
public sealed class LoggingConfigurationTests
{
    private const string RequestLogger = "Serilog.AspNetCore.RequestLoggingMiddleware";

    [Fact]
    public async Task Compact_json_logs_are_one_event_per_line_carrying_the_callers_trace_id()
    {
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-logging-").FullName, "workflow.db");
        await using var node = await TestServiceProcess.StartAsync("logging", new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={database}",
            ["Serilog:MinimumLevel:Default"] = "Information",
            ["Serilog:WriteTo:0:Args:formatter"] = "Serilog.Formatting.Compact.CompactJsonFormatter, Serilog.Formatting.Compact",
        });
        using var client = node.CreateClient();
        var listed = ActivityTraceId.CreateRandom().ToHexString();
        var rejected = ActivityTraceId.CreateRandom().ToHexString();

        using var list = await SendAsync(client, HttpMethod.Get, "/definitions", listed);
        using var bad = await SendAsync(client, HttpMethod.Post, "/instances", rejected, "{");
        var problem = JsonNode.Parse(await bad.Content.ReadAsStringAsync())!;

        Assert.Equal(HttpStatusCode.OK, list.StatusCode);
        Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        Assert.Equal(rejected, (string?)problem["traceId"]);
        var listLine = await RequestLineAsync(node, listed);
        var badLine = await RequestLineAsync(node, rejected);
        Assert.Equal("GET", (string?)listLine["RequestMethod"]);
        Assert.Equal("/definitions", (string?)listLine["RouteTemplate"]);
        Assert.Equal(200, (int?)listLine["StatusCode"]);
        Assert.True((double?)listLine["Elapsed"] > 0);
        Assert.Equal("POST", (string?)badLine["RequestMethod"]);
        Assert.Equal("/instances", (string?)badLine["RouteTemplate"]);
        Assert.Equal(400, (int?)badLine["StatusCode"]);

        var lines = node.OutputLines;
        Assert.All(lines, line => Assert.IsType<JsonObject>(JsonNode.Parse(line)));
        Assert.Equal(lines.Count, lines.Distinct(StringComparer.Ordinal).Count());
        var events = lines.Select(l => JsonNode.Parse(l)!).ToList();
        Assert.Single(events, e => (string?)e["@tr"] == listed && (string?)e["SourceContext"] == RequestLogger);
        // The readiness probes the harness sent while the node started are not logged at the default level.
        Assert.DoesNotContain(events, e => ((string?)e["RequestPath"])?.StartsWith("/health", StringComparison.Ordinal) == true);
        // Neither the caller's key nor the body it sent appear in the log.
        var key = client.DefaultRequestHeaders.GetValues("X-Api-Key").Single();
        Assert.DoesNotContain(lines, l => l.Contains(key, StringComparison.Ordinal));
    }

    [Fact]
    public async Task Text_logs_carry_the_trace_and_span_of_the_request_they_were_written_in()
    {
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-logging-").FullName, "workflow.db");
        await using var node = await TestServiceProcess.StartAsync("logging-text", new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={database}",
            ["Serilog:MinimumLevel:Default"] = "Information",
        });
        using var client = node.CreateClient();
        var traced = ActivityTraceId.CreateRandom().ToHexString();

        using var list = await SendAsync(client, HttpMethod.Get, "/definitions", traced);

        Assert.Equal(HttpStatusCode.OK, list.StatusCode);
        string? line = null;
        await Eventually.WaitUntilAsync(() => (line = node.OutputLines.FirstOrDefault(l => l.Contains(RequestLogger, StringComparison.Ordinal)
            && l.Contains($"trace={traced} span=", StringComparison.Ordinal))) is not null, TimeSpan.FromSeconds(10), "the request line with its trace");
        // The span is the request's own (a child of the caller's), 16 hex digits.
        Assert.Matches($"trace={traced} span=[0-9a-f]{{16}}$", line!);
        // Lines written outside any trace (the workers' start) carry none.
        var started = Assert.Single(node.OutputLines, l => l.Contains("Signal dispatcher started", StringComparison.Ordinal));
        Assert.DoesNotContain(" trace=", started, StringComparison.Ordinal);
    }

    private static async Task<HttpResponseMessage> SendAsync(HttpClient client, HttpMethod method, string path, string traceId, string? body = null)
    {
        using var request = new HttpRequestMessage(method, path);
        request.Headers.Add("traceparent", $"00-{traceId}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
        if (body is not null)
        {
            request.Content = new StringContent(body, Encoding.UTF8, "application/json");
        }

        return await client.SendAsync(request);
    }

    /// <summary>The request line of the request traced as <paramref name="traceId"/>; it is written once the answer is sent.</summary>
    private static async Task<JsonNode> RequestLineAsync(ServiceProcess node, string traceId)
    {
        var until = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (true)
        {
            var line = node.OutputLines
                .Select(l => JsonNode.Parse(l)!)
                .FirstOrDefault(e => (string?)e["@tr"] == traceId && (string?)e["SourceContext"] == RequestLogger);
            if (line is not null)
            {
                return line;
            }

            Assert.True(DateTime.UtcNow < until, $"no request line with trace id {traceId} in: {string.Join('\n', node.OutputLines)}");
            await Task.Delay(50);
        }
    }
}
