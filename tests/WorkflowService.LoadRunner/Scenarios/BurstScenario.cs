using System.Diagnostics;
using System.Text.Json.Nodes;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The wake-up transport alone: <see cref="Scenario.Ops"/> signal-roundtrip instances are started and left waiting
/// (not measured), then one client enqueues one signal per instance as fast as it can — immediately due, or due
/// <see cref="Delay"/> later — and every completion is awaited by long-poll. Per signal the service's own timestamps give
/// enqueue → handled (created_at → handled_at) and, for delayed signals, the lateness past the due time.
/// </summary>
internal sealed class BurstScenario : Scenario
{
    public const string Enqueue = "enqueue";
    public const string EnqueueToHandled = "enqueueToHandled";
    public const string LatenessPastDue = "latenessPastDue";

    /// <summary>Zero for immediate signals; otherwise each signal's dueAt is its enqueue time plus this.</summary>
    public TimeSpan Delay { get; init; }

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override int WarmUpOps => 4;

    public override async Task WarmUpAsync(ScenarioContext context)
    {
        var ids = await StartWaitingAsync(context, WarmUpOps);
        foreach (var id in ids)
        {
            await context.Client.SignalAsync(id, "go", new { value = 0 }, context.Cancellation);
            await context.Client.WaitForCompletionAsync(id, context.Cancellation);
        }
    }

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var ids = await StartWaitingAsync(context, Ops);

        var enqueueMs = new double[Ops];
        var errors = new string?[Ops];
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < Ops; i++)
        {
            var sent = Stopwatch.GetTimestamp();
            try
            {
                await client.SignalAsync(ids[i], "go", new { value = i }, ct, Delay > TimeSpan.Zero ? DateTimeOffset.UtcNow + Delay : null);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                errors[i] = e.Message;
            }

            enqueueMs[i] = Stopwatch.GetElapsedTime(sent).TotalMilliseconds;
        }

        var completions = await Task.WhenAll(ids.Select(async (id, i) =>
        {
            if (errors[i] is not null)
            {
                return null;
            }

            try
            {
                return await client.WaitForCompletionAsync(id, ct);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                errors[i] = e.Message;
                return null;
            }
        }));
        var duration = clock.Elapsed;

        var samples = new OperationSample[Ops];
        for (var i = 0; i < Ops; i++)
        {
            var problem = errors[i] ?? (completions[i] is { } done ? Json.NotCompleted(done) : "no completion");
            var phases = new Dictionary<string, double> { [Enqueue] = enqueueMs[i] };
            var handledMs = double.NaN;
            if (problem is null)
            {
                var go = (await client.GetItemsAsync($"/instances/{ids[i]}/signals", ct))
                    .Select(s => s!.AsObject()).FirstOrDefault(s => Json.Text(s["name"]) == "go");
                (handledMs, var lateness, problem) = Timing(go);
                phases[EnqueueToHandled] = handledMs;
                if (Delay > TimeSpan.Zero)
                {
                    phases[LatenessPastDue] = lateness;
                }
            }

            samples[i] = new OperationSample(problem is null, handledMs, phases, problem);
            context.Progress.Record(problem is null);
        }

        var measurement = new Measurement(samples, duration);
        measurement.Notes.Add(Delay > TimeSpan.Zero
            ? $"latency = enqueue → handled by the service's clock (includes the {Delay.TotalSeconds:0.#} s due time); {LatenessPastDue} = handled − dueAt"
            : "latency = enqueue → handled by the service's clock (signal created_at → handled_at)");
        return measurement;
    }

    private static (double HandledMs, double LatenessMs, string? Problem) Timing(JsonObject? signal)
    {
        if (signal is null || Json.Text(signal["status"]) != "Handled" || signal["handledAt"] is null)
        {
            return (double.NaN, double.NaN, $"the signal is not handled: {signal?.ToJsonString()}");
        }

        var created = DateTimeOffset.Parse(Json.Text(signal["createdAt"])!, System.Globalization.CultureInfo.InvariantCulture);
        var handled = DateTimeOffset.Parse(Json.Text(signal["handledAt"])!, System.Globalization.CultureInfo.InvariantCulture);
        var due = DateTimeOffset.Parse(Json.Text(signal["dueAt"])!, System.Globalization.CultureInfo.InvariantCulture);
        return ((handled - created).TotalMilliseconds, (handled - due).TotalMilliseconds, null);
    }

    private static async Task<Guid[]> StartWaitingAsync(ScenarioContext context, int count)
    {
        var ids = new Guid[count];
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, Math.Min(count, 8)).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < count)
            {
                ids[i] = Json.Id(await context.Client.StartAsync(SignalRoundtripScenario.Definition, new { burst = i }, context.Cancellation));
            }
        }));
        return ids;
    }
}
