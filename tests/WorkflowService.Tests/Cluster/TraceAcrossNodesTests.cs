using System.Diagnostics;
using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry;
using OpenTelemetry.Trace;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Traces across the durable gap: the caller's request that sends a signal and the run that handles it later, on another
/// node, are one trace, carried by the W3C trace context stored with the signal. Spans go to OpenTelemetry's in-memory
/// exporter through the service's own registrations; only the exporter is the test's.
/// </summary>
public sealed class TraceAcrossNodesTests : ServiceTest<PostgresBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_signal_request_on_one_node_and_the_run_that_handles_it_on_another_are_one_trace()
    {
        var database = await CreateDatabaseAsync();
        // One provider collects for the whole process (listeners are process-wide): the spans of both nodes land here.
        var spans = new SpanCollection();
        // Node ids of this test's own: other suites' nodes run in the same process, and their spans land here too.
        var workerId = $"worker-{Guid.NewGuid():N}";
        var (worker, _) = await StartServiceAsync(new() { ["Workers:NodeId"] = workerId },
            services => services.AddOpenTelemetry().WithTracing(tracing => tracing.AddInMemoryExporter(spans)), database);
        var frontId = $"front-{Guid.NewGuid():N}";
        var (_, front) = await StartServiceAsync(new()
        {
            // A node that only serves the API and queues every signal, so that the run happens on the other node.
            ["Workers:Enabled"] = "false", ["Workers:NodeId"] = frontId, ["Engine:ApplySignalsOnArrival"] = "false",
        }, database: database);
        Assert.NotNull(worker.Services.GetService<TracerProvider>());
        var name = Definitions.Unique("traced");
        await front.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await front.StartAsync(name);

        var signal = await front.SignalAsync(instance.Id, "go", new { value = 7 });
        await front.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        // The front node's server span of the signal request ...
        Activity? request = null;
        await Eventually.WaitUntilAsync(() => (request = spans.Snapshot().SingleOrDefault(s => s.Kind == ActivityKind.Server
            && (string?)s.GetTagItem("http.route") == "/instances/{id:guid}/signals" && s.GetTagItem("url.path") as string == $"/instances/{instance.Id}/signals"))
            is not null, what: "the signal request's span is exported");
        // ... is the parent of the worker node's run of that signal, and the run of its commit.
        Activity? run = null;
        await Eventually.WaitUntilAsync(() => (run = spans.Snapshot().FirstOrDefault(s => s.OperationName == "workflow.run"
            && Equals(s.GetTagItem("workflow.signal.id"), signal.Id))) is not null, what: "the run's span is exported");
        Assert.Equal(workerId, run!.GetTagItem("workflow.node"));
        Assert.Equal(ActivityKind.Consumer, run.Kind);
        Assert.Equal(request!.TraceId, run.TraceId);
        Assert.Equal(request.SpanId, run.ParentSpanId);
        // What the run ran: the definition and version, the steps it executed, the status it left the instance in.
        Assert.Equal(name, run.GetTagItem("workflow.definition.name"));
        Assert.Equal(1, run.GetTagItem("workflow.definition.version"));
        Assert.True(run.GetTagItem("workflow.run.steps") is int steps && steps >= 1, "the run executed steps");
        Assert.Equal("Completed", run.GetTagItem("workflow.instance.status"));
        Activity? commit = null;
        await Eventually.WaitUntilAsync(() => (commit = spans.Snapshot().FirstOrDefault(s => s.OperationName == "workflow.commit"
            && s.ParentSpanId == run.SpanId)) is not null, what: "the run's commit span is exported");
        Assert.Equal(instance.Id, commit!.GetTagItem("workflow.instance.id"));
        Assert.Equal("Completed", commit.GetTagItem("workflow.instance.status"));
        Assert.Equal(name, commit.GetTagItem("workflow.definition.name"));
        // The group commit that carried it.
        Assert.True(commit.GetTagItem("workflow.commit.group_size") is int group && group >= 1, "the commit's group size is recorded");
        // The claim that took the signal is a span of its own (claims serve many traces), with its batch size.
        Assert.Contains(spans.Snapshot(), s => s.OperationName == "workflow.claim" && workerId.Equals(s.GetTagItem("workflow.node"))
            && s.GetTagItem("workflow.claim.batch_size") is int size && size >= 1
            && s.GetTagItem("workflow.claim.trigger") is "start" or "wake-up" or "time" or "backlog");
        // The front node told the worker of the signal with a wake-up message: a span of its own.
        Assert.Contains(spans.Snapshot(), s => s.OperationName == "workflow.wakeup" && Equals(s.GetTagItem("workflow.node"), frontId)
            && (string?)s.GetTagItem("workflow.wakeup.transport") == "PostgreSQL LISTEN/NOTIFY" && s.Status != ActivityStatusCode.Error);
        // Its NOTIFY is not a span apart: the wake-up's span is its time (a connection the pool opens for it still is).
        Assert.DoesNotContain(spans.Snapshot(), s => s.Kind == ActivityKind.Client && s.Parent is { OperationName: "workflow.wakeup" }
            && !s.DisplayName.StartsWith("CONNECT", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_child_workflow_and_its_call_out_continue_the_trace_of_the_request_that_started_the_parent()
    {
        var spans = new SpanCollection();
        var (_, api) = await StartServiceAsync(new() { ["Workers:NodeId"] = $"tracer-{Guid.NewGuid():N}" },
            services => services.AddOpenTelemetry().WithTracing(tracing => tracing.AddInMemoryExporter(spans)));
        await using var target = await CallOutTarget.StartAsync();
        var child = Definitions.Unique("traced-child");
        var parent = Definitions.Unique("traced-parent");
        await api.PublishAsync($$"""
            {
              "name": "{{child}}",
              "steps": [
                { "id": "price", "type": "http", "method": "POST", "url": "'{{target.Address}}quote'", "body": "({ sum: 100 })",
                  "timeout": "PT5S", "output": "quote" },
                { "id": "done", "type": "complete", "result": "({ premium: vars.quote.body.premium })" }
              ]
            }
            """);
        await api.PublishAsync($$"""
            {
              "name": "{{parent}}",
              "steps": [
                { "id": "delegate", "type": "subWorkflow", "definition": "{{child}}", "output": "child" },
                { "id": "done", "type": "complete", "result": "({ premium: vars.child.output.premium })" }
              ]
            }
            """);

        // The caller's own trace, sampled: everything the start leads to belongs to it.
        var trace = ActivityTraceId.CreateRandom();
        using var start = new HttpRequestMessage(HttpMethod.Post, "/instances") { Content = JsonContent.Create(new { definition = parent }) };
        start.Headers.Add("traceparent", $"00-{trace.ToHexString()}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
        using var started = await api.Http.SendAsync(start, TestContext.Current.CancellationToken);
        Assert.Equal(System.Net.HttpStatusCode.Created, started.StatusCode);
        var parentId = (await started.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json, TestContext.Current.CancellationToken))!.Id;
        await api.WaitForAsync(parentId, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        // The called service received the trace.
        Assert.NotNull(target.LastQuoteTraceParent);
        Assert.Equal(trace.ToHexString(), target.LastQuoteTraceParent!.Split('-')[1]);
        // The parent's runs and the child's (its start, its call-out's resumption) are spans of that trace.
        await Eventually.WaitUntilAsync(() => spans.Snapshot().Any(s => s.OperationName == "workflow.run" && s.TraceId == trace
            && Equals(s.GetTagItem("workflow.definition.name"), child)), what: "the child's run is exported in the caller's trace");
        // The parent's last run ends its span after its commit, which the long-poll above may see first.
        await Eventually.WaitUntilAsync(() => spans.Snapshot().Any(s => s.OperationName == "workflow.run" && s.TraceId == trace
            && Equals(s.GetTagItem("workflow.definition.name"), parent) && Equals(s.GetTagItem("workflow.instance.status"), "Completed")),
            what: "the parent's completing run is exported in the caller's trace");
        // The call-out is an HTTP client span of that trace, under a run.
        Assert.Contains(spans.Snapshot(), s => s.Kind == ActivityKind.Client && s.TraceId == trace
            && spans.Snapshot().Any(run => run.OperationName == "workflow.run" && run.SpanId == s.ParentSpanId));
    }

    [Fact]
    public async Task Without_an_exporter_configured_the_service_collects_no_telemetry()
    {
        // Set empty here, over whatever the environment of the test run says.
        var (node, _) = await StartServiceAsync(new() { ["OTEL_EXPORTER_OTLP_ENDPOINT"] = "" });

        Assert.Null(node.Services.GetService<TracerProvider>());
        Assert.Null(node.Services.GetService<OpenTelemetry.Metrics.MeterProvider>());
    }
}
