using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// The engine's metrics as a collector receives them, through the service's own registrations and OpenTelemetry's
/// in-memory exporter: the names and units of the OpenTelemetry conventions, and values that count the work done.
/// </summary>
public sealed class MetricsTelemetryTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task The_engine_reports_its_work_under_conventional_names_and_units()
    {
        var exported = new List<Metric>();
        // Every meter provider in the process listens to every node's meter: another suite's collector may read this node's
        // gauge before the roundtrips below are done. A short count interval lets that early count be redone within the wait.
        var (node, api) = await StartServiceAsync(new()
        {
            ["Telemetry:InstanceCountInterval"] = "00:00:02",
            // Signals queued for the workers, so that the claim's instruments have claims to measure.
            ["Engine:ApplySignalsOnArrival"] = "false",
        }, services => services.AddOpenTelemetry().WithMetrics(metrics => metrics.AddInMemoryExporter(exported)));
        await api.CompleteRoundtripsAsync("measured", 3);

        var provider = node.Services.GetRequiredService<MeterProvider>();
        Assert.True(provider.ForceFlush(10_000));
        // The instances gauge counts when first read and reports from the next read on.
        await Eventually.WaitUntilAsync(() => provider.ForceFlush(10_000) && Gauge(exported, "workflow.instances", "Completed") >= 3,
            // 60 s: in a whole-suite run on two cores the count query waited behind the other suites' load past 30 s once.
            TimeSpan.FromSeconds(60), "the instances gauge to count the completed instances");

        var units = exported.GroupBy(m => m.Name).ToDictionary(g => g.Key, g => g.Last().Unit);
        var expected = TelemetryExpectations.Units;
        foreach (var (metric, unit) in expected)
        {
            Assert.True(units.TryGetValue(metric, out var actual), $"{metric} was not exported; exported: {string.Join(", ", units.Keys.Order())}");
            Assert.Equal(unit, actual);
        }

        // Other suites' nodes in this process report under the same meter: at least this test's work is counted.
        Assert.True(Sum(exported, "workflow.signals.handled") >= 3);
        Assert.True(Sum(exported, "workflow.signals.accepted") >= 3);
    }

    private static long Gauge(List<Metric> exported, string name, string status)
    {
        // Other nodes alive in the process export a gauge of the same name too: this node's is one of them.
        var found = -1L;
        foreach (var metric in exported.Where(m => m.Name == name))
        {
            foreach (ref readonly var point in metric.GetMetricPoints())
            {
                foreach (var tag in point.Tags)
                {
                    if (tag.Key == "workflow.instance.status" && Equals(tag.Value, status))
                    {
                        found = Math.Max(found, point.GetGaugeLastValueLong());
                    }
                }
            }
        }

        return found;
    }

    private static long Sum(List<Metric> exported, string name)
    {
        long total = 0;
        foreach (var metric in exported.Where(m => m.Name == name).TakeLast(1))
        {
            foreach (ref readonly var point in metric.GetMetricPoints())
            {
                total += point.GetSumLong();
            }
        }

        return total;
    }
}
