using System.Diagnostics;
using System.Globalization;
using System.Text.Json.Nodes;
using WorkflowService.LoadRunner.Reporting;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// long-instance: whether a signal costs more as its instance's own history grows. An instance loops on the signal "tick"
/// (tests/WorkflowService.Benchmarks/Definitions/long-instance.json): one instance takes <see cref="SingleLoops"/> ticks
/// one after another, then <see cref="ManyInstances"/> instances take <see cref="ManyLoops"/> ticks each through
/// <see cref="Scenario.Concurrency"/> clients. A tick is timed from its POST to the instance's next commit, observed by
/// a long-poll on its revision (GET /instances/{id}?afterRevision). The figures set the last ticks against the first:
/// the single instance's last <see cref="Compared"/> against its first, and the many instances' last ten loops of each
/// against their first ten.
/// </summary>
internal sealed class LongInstanceScenario : Scenario
{
    public const string Definition = "long-instance";
    public const int SingleLoops = 10_000;
    public const int ManyInstances = 1_000;
    public const int ManyLoops = 100;
    public const int Compared = 1_000;
    private const int ComparedLoops = 10;

    public override IReadOnlyList<string> DefinitionFiles => ["tests/WorkflowService.Benchmarks/Definitions/long-instance.json"];

    /// <summary>Warm-up: a few instances of a few loops each, through the same calls.</summary>
    public override int WarmUpOps => 8 * 20;

    public override async Task WarmUpAsync(ScenarioContext context) =>
        await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => LoopAsync(context.Client, 20, null, context.Cancellation)));

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var clock = Stopwatch.StartNew();

        // One instance, its history growing by every tick.
        var single = new List<OperationSample>(SingleLoops);
        await LoopAsync(client, SingleLoops, sample =>
        {
            single.Add(sample);
            context.Progress.Record(sample.Ok);
        }, ct);
        var singleTime = clock.Elapsed;

        // Many instances side by side: each tick's loop index kept with it.
        var many = new List<(int Loop, OperationSample Sample)>(ManyInstances * ManyLoops);
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(_ => Task.Run(async () =>
        {
            while (Interlocked.Increment(ref next) < ManyInstances)
            {
                var loop = 0;
                await LoopAsync(client, ManyLoops, sample =>
                {
                    lock (many)
                    {
                        many.Add((loop++, sample));
                    }

                    context.Progress.Record(sample.Ok);
                }, ct);
            }
        }, ct)));

        var measurement = new Measurement([.. single, .. many.Select(m => m.Sample)], clock.Elapsed);
        Compare(measurement, "one instance", single.Take(Compared), single.Skip(single.Count - Compared), $"its first {Compared:N0} ticks", $"its last {Compared:N0}");
        Compare(measurement, $"{ManyInstances:N0} instances", many.Where(m => m.Loop < ComparedLoops).Select(m => m.Sample),
            many.Where(m => m.Loop >= ManyLoops - ComparedLoops).Select(m => m.Sample), $"the first {ComparedLoops} ticks of each", $"the last {ComparedLoops}");
        measurement.Figures["one instance: ticks/s"] = Math.Round(single.Count / singleTime.TotalSeconds, 1);
        measurement.Figures[$"{ManyInstances:N0} instances: ticks/s"] = Math.Round(many.Count / (clock.Elapsed - singleTime).TotalSeconds, 1);
        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"One instance ticked {SingleLoops:N0} times by one client, then {ManyInstances:N0} instances {ManyLoops} times each by {Concurrency} clients; a tick: POST the signal, then GET ?afterRevision until the instance's next commit (signalPublish, then signalToCompletion). Each tick adds 4 history events."));
        return measurement;
    }

    /// <summary>Starts an instance of <paramref name="loops"/> ticks and ticks it to its end, handing each tick's sample over.</summary>
    private static async Task LoopAsync(WorkflowClient client, int loops, Action<OperationSample>? record, CancellationToken ct)
    {
        var instance = await client.StartAsync(Definition, new { loops }, ct);
        var id = Json.Id(instance);
        var revision = instance["revision"]!.GetValue<int>();
        for (var tick = 1; tick <= loops; tick++)
        {
            var clock = new PhaseClock();
            OperationSample sample;
            try
            {
                await client.SignalAsync(id, "tick", null, ct);
                clock.Lap(Phases.SignalPublish);
                var after = await client.WaitForRevisionAfterAsync(id, revision, ct);
                clock.Lap(Phases.SignalToCompletion);
                var now = after["revision"]!.GetValue<int>();
                var error = now <= revision ? $"tick {tick}: no commit within the long-poll (revision {now})" : Expected(after, tick, loops);
                revision = now;
                sample = clock.Finish(error);
            }
            catch (Exception e) when (e is not OperationCanceledException || !ct.IsCancellationRequested)
            {
                sample = OperationSample.Failed(clock.ElapsedMs, e);
            }

            record?.Invoke(sample);
            if (!sample.Ok)
            {
                return;
            }
        }
    }

    /// <summary>Null when the instance is where tick <paramref name="tick"/> leaves it: waiting again with the count, or completed.</summary>
    private static string? Expected(JsonObject instance, int tick, int loops)
    {
        var status = instance["status"]?.GetValue<string>();
        var count = (tick == loops ? instance["output"]?["count"] : instance["variables"]?["count"])?.GetValue<double>();
        return (status, count) == (tick == loops ? "Completed" : "Waiting", tick) ? null : $"tick {tick}: {status} with count {count?.ToString(CultureInfo.InvariantCulture) ?? "none"}";
    }

    private static void Compare(Measurement measurement, string who, IEnumerable<OperationSample> first, IEnumerable<OperationSample> last, string firstName, string lastName)
    {
        var a = LatencySummary.From(first.Where(s => s.Ok).Select(s => s.EndToEndMs));
        var b = LatencySummary.From(last.Where(s => s.Ok).Select(s => s.EndToEndMs));
        if (a is null || b is null)
        {
            measurement.Notes.Add($"{who}: no ticks to compare");
            return;
        }

        measurement.Figures[$"{who}: p50 first (ms)"] = a.P50;
        measurement.Figures[$"{who}: p50 last (ms)"] = b.P50;
        measurement.Figures[$"{who}: p99 first (ms)"] = a.P99;
        measurement.Figures[$"{who}: p99 last (ms)"] = b.P99;
        measurement.Figures[$"{who}: last/first p50"] = Math.Round(b.P50 / a.P50, 3);
        measurement.Figures[$"{who}: last/first p99"] = Math.Round(b.P99 / a.P99, 3);
        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{who}: {firstName} p50 {a.P50:0.00} ms, p99 {a.P99:0.00} ms; {lastName} p50 {b.P50:0.00} ms, p99 {b.P99:0.00} ms"));
    }
}
