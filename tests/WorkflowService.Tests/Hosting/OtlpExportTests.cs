using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// What a collector receives from a real node configured the standard way (OTEL_EXPORTER_OTLP_ENDPOINT and
/// OTEL_EXPORTER_OTLP_PROTOCOL only): an OTLP/HTTP receiver the test runs reads the exports off the wire and finds the
/// engine's spans and the request spans by name, the metrics by name with the units docs/operations.md gives, and the
/// log records, those written in a request carrying its trace id. The exporters' own calls are not traced.
/// </summary>
public sealed class OtlpExportTests
{
    [Fact]
    public async Task A_node_sends_its_traces_metrics_and_logs_to_the_configured_collector()
    {
        await using var receiver = OtlpReceiver.Start();
        var directory = Directory.CreateTempSubdirectory("workflow-otlp-").FullName;
        await using var node = await TestServiceProcess.StartAsync("exported", new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={Path.Combine(directory, "workflow.db")}",
            ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.Endpoint,
            ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
            // Sooner than the defaults (a minute for metrics, five seconds for spans), so that the test waits less.
            ["OTEL_METRIC_EXPORT_INTERVAL"] = "1000",
            ["OTEL_BSP_SCHEDULE_DELAY"] = "200",
            // The request lines, written inside each request's trace.
            ["Serilog:MinimumLevel:Default"] = "Information",
            // Signals queued for the workers, so that a claim's span is among those exported.
            ["Engine:ApplySignalsOnArrival"] = "false",
        });
        var api = new ApiClient(node.CreateClient());
        await api.CompleteRoundtripsAsync("exported", 3);

        string[] spans = ["workflow.claim", "workflow.run", "workflow.commit", "POST /instances/{id:guid}/signals"];
        // Every run's span, and at least one of each other kind (exports arrive in batches, in their own time).
        await Eventually.WaitUntilAsync(() => spans.All(receiver.SpanNames.ContainsKey) && receiver.SpanNames["workflow.run"] >= 3,
            TimeSpan.FromSeconds(60), $"the spans {string.Join(", ", spans)} to arrive, workflow.run three times");

        var units = TelemetryExpectations.Units;
        await Eventually.WaitUntilAsync(() => units.Keys.All(receiver.MetricUnits.ContainsKey), TimeSpan.FromSeconds(60),
            "the metrics to arrive");
        foreach (var (metric, unit) in units)
        {
            Assert.Equal(unit, receiver.MetricUnits[metric]);
        }

        await Eventually.WaitUntilAsync(() => receiver.Totals.TracedLogRecords > 0, TimeSpan.FromSeconds(60),
            "log records written inside a request's trace to arrive");
        Assert.Equal(0, receiver.Totals.UnreadableRequests);
        // The exporters' own HTTP requests (to this receiver) are not traced: no client span of theirs arrived.
        Assert.DoesNotContain(receiver.SpanNames.Keys, span => span.StartsWith("POST", StringComparison.Ordinal) && !span.Contains('/', StringComparison.Ordinal));
    }
}
