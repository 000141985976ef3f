using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The synthetic workflow: start → it waits for "go" → the signal's payload is assigned → it completes
/// (docs/examples/signal-roundtrip.json). Optionally with completed instances stored beforehand (table growth).
/// </summary>
internal sealed class SignalRoundtripScenario : ClosedLoopScenario
{
    public const string Definition = "signal-roundtrip";

    /// <summary>Completed instances stored with direct SQL before the scenario (signal-roundtrip-table-growth); null for none.</summary>
    public int? SeedCompletedInstances { get; init; }

    /// <summary>
    /// The service's Retention:EndedInstances (defaults otherwise): with a seed older than it, the retention job deletes
    /// the seeded instances in the background while the scenario runs; null for no retention.
    /// </summary>
    public TimeSpan? RetentionPeriod { get; init; }

    public override IReadOnlyDictionary<string, string> ServiceSettings => RetentionPeriod is { } period
        ? new Dictionary<string, string> { ["Retention__EndedInstances"] = period.ToString("c", System.Globalization.CultureInfo.InvariantCulture) }
        : base.ServiceSettings;

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override Func<ScenarioContext, Task<string>>? Preparation => SeedCompletedInstances is { } count
        ? context => context.Backend.SeedCompletedInstancesAsync(count, context.Cancellation)
        : null;

    protected override Task<OperationSample> OperationAsync(ScenarioContext context, int index) =>
        RoundtripAsync(context.Client, index, context.Cancellation);

    /// <summary>One workflow through <paramref name="client"/>: start, signal "go", completion observed by a long-poll.</summary>
    public static async Task<OperationSample> RoundtripAsync(WorkflowClient client, int index, CancellationToken ct)
    {
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync(Definition, new { n = index }, ct));
        clock.Lap(Phases.Start);
        await client.SignalAsync(id, "go", new { value = index }, ct);
        clock.Lap(Phases.SignalPublish);
        var done = await client.WaitForCompletionAsync(id, ct);
        clock.Lap(Phases.SignalToCompletion);
        return clock.Finish(Json.NotCompleted(done) ?? (done["output"]?["result"]?["value"]?.GetValue<int>() == index
            ? null
            : $"unexpected output {done["output"]?.ToJsonString()}"));
    }
}
