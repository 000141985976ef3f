using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// One http call-out per operation: start with the url of a local endpoint in the runner (<see cref="CallOutEndpoint"/>,
/// answering at once), the service makes the call and completes with the answer, observed by a long-poll
/// (tests/WorkflowService.Benchmarks/Definitions/callout-roundtrip.json). The endpoint's CPU is the runner's.
/// </summary>
internal sealed class CallOutRoundtripScenario : ClosedLoopScenario
{
    public const string Definition = "callout-roundtrip";

    /// <summary>Start acknowledged → the instance observed Completed (the call-out made and its answer committed).</summary>
    public const string CallOutToCompletion = "callOutToCompletion";

    private CallOutEndpoint? _own;

    /// <summary>
    /// The endpoint the call-outs go to, where the run shares one among its scenarios and stops it itself (interleave);
    /// null: the scenario starts its own when the runner reads <see cref="ServiceSettings"/> and stops it in <see cref="StopAsync"/>.
    /// </summary>
    public CallOutEndpoint? Target { get; init; }

    private CallOutEndpoint Endpoint => Target ?? (_own ??= new CallOutEndpoint(TimeSpan.Zero));

    public override IReadOnlyDictionary<string, string> ServiceSettings => Endpoint.ServiceSettings;

    public override IReadOnlyList<string> DefinitionFiles => ["tests/WorkflowService.Benchmarks/Definitions/callout-roundtrip.json"];

    public override async ValueTask StopAsync()
    {
        if (_own is { } own)
        {
            _own = null;
            await own.DisposeAsync();
        }
    }

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync(Definition, new { url = Endpoint.Url.ToString(), n = index }, ct));
        clock.Lap(Phases.Start);
        var done = await client.WaitForCompletionAsync(id, ct);
        clock.Lap(CallOutToCompletion);
        return clock.Finish(Json.NotCompleted(done) ?? (done["output"]?["n"]?.GetValue<int>() == index
            ? null
            : $"unexpected output {done["output"]?.ToJsonString()}"));
    }
}
