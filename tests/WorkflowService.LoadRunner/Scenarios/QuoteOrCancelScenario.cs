using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The short business flow (docs/examples/insurance-quote-or-cancel.json): a quote, then the customer's decision;
/// even operations accept (the application is converted), odd ones cancel it.
/// </summary>
internal sealed class QuoteOrCancelScenario : ClosedLoopScenario
{
    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/insurance-quote-or-cancel.json"];

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var accept = index % 2 == 0;
        var clock = new PhaseClock();
        var id = Json.Id(await client.StartAsync("insurance-quote-or-cancel", new { sumInsured = 250_000 + index }, ct));
        clock.Lap(Phases.Start);
        object decision = accept ? new { action = "accept" } : new { action = "cancel", reason = "customer withdrew the application" };
        await client.SignalAsync(id, "customer-decision", decision, ct);
        clock.Lap(Phases.SignalPublish);
        var done = await client.WaitForCompletionAsync(id, ct);
        clock.Lap(Phases.SignalToCompletion);
        var expected = accept ? "converted" : "cancelled";
        return clock.Finish(Json.NotCompleted(done) ?? (Json.Text(done["output"]?["outcome"]) == expected
            ? null
            : $"expected outcome {expected}, got {done["output"]?.ToJsonString()}"));
    }
}
