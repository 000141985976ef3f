using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;
using WorkflowService.Api;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Events;

/// <summary>
/// Events out as an operator watches them: a node's instruments and spans, through the service's own registrations and
/// OpenTelemetry's in-memory exporters, while one instance's events reach three receivers: one that takes them, one that
/// fails each once, and one that always fails (its deliveries dead-lettered). GET /metrics counts the same.
/// </summary>
public sealed class EventTelemetryTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Writes_deliveries_retries_dead_letters_and_lag_are_measured_and_each_post_is_a_span_of_the_commits_trace()
    {
        var spans = new SpanCollection();
        var exported = new List<Metric>();
        // Other suites' nodes run in this process and report under the same names: this node's spans carry its id.
        var nodeId = $"events-{Guid.NewGuid():N}";
        var (node, api) = await StartServiceAsync(new()
        {
            ["Workers:NodeId"] = nodeId,
            ["Events:FirstRetryDelay"] = "00:00:00.020",
            ["Events:MaxRetryDelay"] = "00:00:00.100",
            ["Events:MaxAttempts"] = "2",
            ["Events:PollInterval"] = "00:00:00.200",
        }, services => services.AddOpenTelemetry()
            .WithTracing(tracing => tracing.AddInMemoryExporter(spans))
            .WithMetrics(metrics => metrics.AddInMemoryExporter(exported)));
        await using var receiver = await EventReceiver.StartAsync();
        var name = Definitions.Unique("measured-events");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var ok = await receiver.SubscribeAsync(api, $"/ok/{name}", name);
        var flaky = await receiver.SubscribeAsync(api, $"/flaky/{name}-flaky/1", name);
        var failing = await receiver.SubscribeAsync(api, $"/flaky/{name}-failing/100", name);

        // Started in the caller's own sampled trace: the instance.started events are written by that request's commit.
        var trace = ActivityTraceId.CreateRandom();
        using var start = new HttpRequestMessage(HttpMethod.Post, "/instances") { Content = JsonContent.Create(new { definition = name }) };
        start.Headers.Add("traceparent", $"00-{trace.ToHexString()}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
        using var started = await api.Http.SendAsync(start, Token);
        Assert.Equal(HttpStatusCode.Created, started.StatusCode);
        var instance = (await started.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json, Token))!.Id;
        await api.SignalAsync(instance, "go", new { value = 1 });
        await api.WaitForAsync(instance, InstanceStatus.Completed);

        // Two events (started, completed) to each subscription, settled: delivered, delivered after a retry, dead-lettered.
        await Eventually.WaitUntilAsync(async () => await CountAsync(api, ok, DeliveryStatus.Delivered) == 2
            && await CountAsync(api, flaky, DeliveryStatus.Delivered) == 2 && await CountAsync(api, failing, DeliveryStatus.DeadLettered) == 2,
            what: "every delivery settled");

        // GET /metrics: this node's totals, exactly (a retry is a failed post tried again: one per flaky event, one per failing one).
        var totals = (await api.Http.GetFromJsonAsync<NodeMetricsView>("/metrics", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal((6L, 4L, 4L, 2L), (totals.EventsWritten, totals.EventsDelivered, totals.EventDeliveryRetries, totals.EventsDeadLettered));
        Assert.Equal(4, totals.EventLag.Count);

        // The instruments, under their names and units, with every outcome of a post (other nodes may add to them).
        var provider = node.Services.GetRequiredService<MeterProvider>();
        Assert.True(provider.ForceFlush(10_000));
        var units = exported.GroupBy(m => m.Name).ToDictionary(g => g.Key, g => g.Last().Unit);
        foreach (var (metric, unit) in new Dictionary<string, string>
                 {
                     ["workflow.events.written"] = "{event}", ["workflow.events.delivered"] = "{event}",
                     ["workflow.events.delivery_attempts"] = "{attempt}", ["workflow.events.dead_lettered"] = "{event}",
                     ["workflow.event.delivery.duration"] = "s", ["workflow.event.lag"] = "s",
                 })
        {
            Assert.True(units.TryGetValue(metric, out var actual), $"{metric} was not exported; exported: {string.Join(", ", units.Keys.Order())}");
            Assert.Equal(unit, actual);
        }

        Assert.True(Sum(exported, "workflow.events.written") >= 6);
        Assert.True(Sum(exported, "workflow.events.dead_lettered") >= 2);
        var attempts = Outcomes(exported, "workflow.events.delivery_attempts");
        Assert.True(attempts.GetValueOrDefault(DeliveryOutcomes.Success) >= 4 && attempts.GetValueOrDefault(DeliveryOutcomes.Retry) >= 4
            && attempts.GetValueOrDefault(DeliveryOutcomes.DeadLettered) >= 2, $"attempts by outcome: {string.Join(", ", attempts)}");
        Assert.True(Count(exported, "workflow.event.lag") >= 4);
        Assert.True(Count(exported, "workflow.event.delivery.duration") >= 10);

        // A span per post: 2 + 4 + 4, in the trace of the commit that wrote its event.
        List<Activity> posts = [];
        await Eventually.WaitUntilAsync(() => (posts = spans.Snapshot().Where(s => s.OperationName == EngineTelemetry.DeliverySpanName
            && Equals(s.GetTagItem("workflow.node"), nodeId)).ToList()).Count >= 10, what: "every post's span is exported");
        Assert.Equal(10, posts.Count);
        var firstOk = posts.Single(s => Equals(s.GetTagItem("workflow.subscription.id"), ok.Subscription.Id)
            && Equals(s.GetTagItem("workflow.event.type"), EventTypes.InstanceStarted));
        Assert.Equal(trace, firstOk.TraceId);
        Assert.NotEqual(default, firstOk.ParentSpanId);
        Assert.Equal(ActivityKind.Producer, firstOk.Kind);
        Assert.Equal((200, DeliveryOutcomes.Success, 1, instance), (firstOk.GetTagItem("http.response.status_code"),
            firstOk.GetTagItem("workflow.event.delivery.outcome"), firstOk.GetTagItem("workflow.event.delivery.attempt"), firstOk.GetTagItem("workflow.instance.id")));
        Assert.Equal(receiver.Of(name).Single(r => r.Type == EventTypes.InstanceStarted).Id, firstOk.GetTagItem("workflow.event.delivery.id")?.ToString());
        // The POST itself is HttpClient's span under it (ended before it, so exported with it).
        Assert.Contains(spans.Snapshot(), s => s.Kind == ActivityKind.Client && s.ParentSpanId == firstOk.SpanId && s.TraceId == trace);
        // The flaky receiver's failed first posts and their retries, the failing one's retry and dead letter.
        Assert.Equal(2, posts.Count(s => Equals(s.GetTagItem("workflow.subscription.id"), flaky.Subscription.Id)
            && Equals(s.GetTagItem("workflow.event.delivery.outcome"), DeliveryOutcomes.Retry) && Equals(s.GetTagItem("http.response.status_code"), 503)
            && s.Status == ActivityStatusCode.Error));
        Assert.Equal(2, posts.Count(s => Equals(s.GetTagItem("workflow.subscription.id"), failing.Subscription.Id)
            && Equals(s.GetTagItem("workflow.event.delivery.outcome"), DeliveryOutcomes.DeadLettered) && Equals(s.GetTagItem("workflow.event.delivery.attempt"), 2)));
        // Ids, types and statuses only: no secret, no endpoint, no body.
        var secrets = new[] { ok.Secret, flaky.Secret, failing.Secret, receiver.Address.ToString(), "\"data\"" };
        Assert.DoesNotContain(posts.SelectMany(s => s.TagObjects), tag => secrets.Any(secret => tag.Value?.ToString()?.Contains(secret, StringComparison.Ordinal) == true));
    }

    private static async Task<int> CountAsync(ApiClient api, SubscriptionWithSecretView subscription, DeliveryStatus status) =>
        (await api.EveryPageAsync<DeliveryView>($"/subscriptions/{subscription.Subscription.Id}/deliveries?status={status}")).Count;

    private static IEnumerable<MetricPoint> Points(List<Metric> exported, string name)
    {
        // The last export holds the cumulative totals.
        foreach (var metric in exported.Where(m => m.Name == name).TakeLast(1))
        {
            foreach (ref readonly var point in metric.GetMetricPoints())
            {
                yield return point;
            }
        }
    }

    private static long Sum(List<Metric> exported, string name) => Points(exported, name).Sum(p => p.GetSumLong());

    private static long Count(List<Metric> exported, string name) => Points(exported, name).Sum(p => p.GetHistogramCount());

    private static Dictionary<string, long> Outcomes(List<Metric> exported, string name)
    {
        var byOutcome = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var point in Points(exported, name))
        {
            foreach (var tag in point.Tags)
            {
                if (tag.Key == "outcome" && tag.Value is string outcome)
                {
                    byOutcome[outcome] = byOutcome.GetValueOrDefault(outcome) + point.GetSumLong();
                }
            }
        }

        return byOutcome;
    }
}
