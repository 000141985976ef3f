using WorkflowService.LoadRunner.Cli;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The heavier business flow (docs/examples/insurance-quotation-confirm-convert-to-policy.json): the quotation is
/// priced and waits in the underwriters' inbox; the client reads the inbox (projection), completes the task, posts the
/// document generator's callback and the customer's signature right away (a signal that arrives before its wait is
/// parked and consumed when the wait is reached), waits for completion and reads the history (projection).
/// </summary>
internal sealed class QuotationToPolicyScenario : ClosedLoopScenario
{
    public const string InboxQuery = "inboxQuery";
    public const string TaskComplete = "taskComplete";
    public const string HistoryQuery = "historyQuery";

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/insurance-quotation-confirm-convert-to-policy.json"];

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var clock = new PhaseClock();
        var input = new { sumInsured = 400_000 + index, riskClass = index % 3 == 0 ? "high" : "standard", applicant = new { name = $"Applicant {index}" } };
        var started = await client.StartAsync("insurance-quotation-confirm-convert-to-policy", input, ct, businessKey: $"Q-{Guid.NewGuid():N}");
        var id = Json.Id(started);
        // The first wait is the human task, so the start's answer already names it.
        var taskId = Json.Id(started["wait"], "taskId");
        clock.Lap(Phases.Start);
        var inbox = await client.GetPageAsync($"/tasks?role=underwriter&status=Open&instanceId={id}", ct);
        if ((int)inbox["total"]! != 1)
        {
            return clock.Finish($"the inbox shows {inbox["total"]} open tasks for the instance");
        }

        clock.Lap(InboxQuery);
        // With authentication on, the caller completes the task (the runner's key carries the underwriter role); a user named
        // in the body must be the caller, so none is named. With it off, the body names the underwriter.
        await client.CompleteTaskAsync(taskId, context.Options.Auth == AuthMode.None ? "underwriter-1" : null,
            new { confirmed = true, comment = "standard terms" }, ct);
        clock.Lap(TaskComplete);
        await client.SignalAsync(id, "policy-document-generated", new { documentId = $"DOC-{id:N}", pages = 4 }, ct);
        await client.SignalAsync(id, "policy-signed", new { signedAt = DateTimeOffset.UtcNow }, ct);
        clock.Lap(Phases.SignalPublish);
        var done = await client.WaitForCompletionAsync(id, ct);
        clock.Lap(Phases.SignalToCompletion);
        var history = await client.GetItemsAsync($"/instances/{id}/history", ct);
        clock.Lap(HistoryQuery);
        if (Json.NotCompleted(done) is { } problem)
        {
            return clock.Finish(problem);
        }

        var events = history.Select(e => Json.Text(e?["type"])).ToList();
        return clock.Finish(Json.Text(done["output"]?["status"]) != "policy-issued"
            ? $"unexpected output {done["output"]?.ToJsonString()}"
            : !events.Contains("TaskCompleted") || events.Count(e => e == "SignalReceived") != 2
                ? $"unexpected history {string.Join(",", events)}"
                : null);
    }
}
