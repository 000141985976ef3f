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

    /// <summary>
    /// Start each instance with what a business app would send about it (<see cref="BusinessInput"/>) rather than
    /// <c>{ n }</c> alone: the input search attributes that are paths read.
    /// </summary>
    public bool WithBusinessInput { get; init; }

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override Func<ScenarioContext, Task<string>>? Preparation => SeedCompletedInstances is { } count
        ? context => context.Backend.SeedCompletedInstancesAsync(count, context.Cancellation)
        : null;

    /// <summary>
    /// Queues the two events of each workflow for the runner to post after it (the interleaved run's posts-alone), apart
    /// from the load, as the service's dispatcher posts them.
    /// </summary>
    public WebhookPoster? Posts { get; init; }

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        var sample = await RoundtripAsync(context.Client, index, context.Cancellation, WithBusinessInput ? BusinessInput(index) : null);
        if (Posts is { } posts)
        {
            await posts.QueueAsync(index, context.Cancellation);
        }

        return sample;
    }

    private static readonly string[] Regions = ["EU", "US", "UK", "APAC", "LATAM"];

    private static readonly DateTime YearStart = new(2026, 1, 1, 0, 0, 0, DateTimeKind.Utc);

    /// <summary>
    /// <c>{ n, region, amount, submittedAt }</c>: the values tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search.json
    /// computes from <c>n</c>, sent as a client would send them (a warm-up's negative index taken modulo, so each has all three).
    /// </summary>
    public static object BusinessInput(int index) => new
    {
        n = index,
        region = Regions[((index % 5) + 5) % 5],
        amount = (((long)index * 7919 % 20001) + 20001) % 20001,
        submittedAt = YearStart.AddSeconds(((index % 31536000) + 31536000) % 31536000)
            .ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", System.Globalization.CultureInfo.InvariantCulture),
    };

    /// <summary>One workflow through <paramref name="client"/>: start, signal "go", completion observed by a long-poll.</summary>
    public static async Task<OperationSample> RoundtripAsync(WorkflowClient client, int index, CancellationToken ct, object? input = null)
    {
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync(Definition, input ?? new { n = index }, ct));
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
