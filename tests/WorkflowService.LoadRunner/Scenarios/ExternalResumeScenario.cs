using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// An instance calls out to an external system and waits (with a timeout timer) for its callback signal. The load client
/// plays the external system: it reads the request from the instance, then posts the callback that answers it
/// (tests/WorkflowService.Benchmarks/Definitions/synthetic-external-resume.json).
/// </summary>
internal sealed class ExternalResumeScenario : ClosedLoopScenario
{
    public const string ReadRequest = "readRequest";

    public override IReadOnlyList<string> DefinitionFiles => ["tests/WorkflowService.Benchmarks/Definitions/synthetic-external-resume.json"];

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync("synthetic-external-resume", new { sumInsured = 100_000 + index }, ct));
        clock.Lap(Phases.Start);
        // The external system receives the call: it reads the request the instance prepared.
        var instance = await client.GetInstanceAsync(id, ct);
        var request = instance["variables"]?["request"] ?? throw new InvalidOperationException("the instance prepared no request");
        clock.Lap(ReadRequest);
        var correlationId = Json.Text(request["correlationId"]);
        var premium = Math.Round((request["sumInsured"]?.GetValue<double>() ?? 0) * 0.003, 2);
        await client.SignalAsync(id, Json.Text(request["replyWith"]) ?? "rating-callback", new { correlationId, premium }, ct);
        clock.Lap(Phases.SignalPublish);
        var done = await client.WaitForCompletionAsync(id, ct);
        clock.Lap(Phases.SignalToCompletion);
        return clock.Finish(Json.NotCompleted(done) ?? (Json.Text(done["output"]?["correlationId"]) == correlationId
            ? null
            : $"unexpected output {done["output"]?.ToJsonString()}"));
    }
}
