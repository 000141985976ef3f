using System.Globalization;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The signal-roundtrip across two nodes, one operation at a time: an API-only front node (no workers) starts the instance,
/// holds a long-poll on it and takes the signal; the service node's workers, woken by the transport's hint, claim and
/// complete it; the front node's long-poll, whose safety re-check is one minute, is answered by the hint of that commit.
/// Two figures come out of it: the wake-up latency (the signal's age when the service node claimed it, from GET /metrics'
/// <c>signalAgeAtClaim</c>) and <see cref="CommitToAnswer"/> (the completing commit to the long-poll's answer).
/// </summary>
internal sealed class CrossNodeRoundtripScenario : ClosedLoopScenario
{
    /// <summary>
    /// The completing run's timestamp (the instance's <c>updatedAt</c>, taken by the store's clock as the run starts,
    /// before its commit) → the front node's long-poll answer received; an upper bound on commit → answer.
    /// </summary>
    public const string CommitToAnswer = "commitToAnswer";

    /// <summary>Start answered → the front node reports the long-poll held (so that the signal comes after it).</summary>
    public const string LongPollHeld = "longPollHeld";

    /// <summary>The front node's long-poll re-check: long enough that every answer in the run came from a hint.</summary>
    public static readonly TimeSpan FrontRecheck = TimeSpan.FromMinutes(1);

    public override bool NeedsFrontNode => true;

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override string? NotApplicableTo(string backend) =>
        backend == "sqlite" ? "one node per SQLite file: there is no other node to wake" : null;

    protected override async Task<OperationSample> OperationAsync(ScenarioContext context, int index)
    {
        if (Concurrency != 1)
        {
            throw new InvalidOperationException("the cross-node roundtrip tells its long-poll from others' only one at a time (concurrency 1)");
        }

        var front = context.Front;
        var ct = context.Cancellation;
        var clock = new PhaseClock();
        var id = Json.Id(await front.StartAsync(SignalRoundtripScenario.Definition, new { n = index }, ct));
        clock.Lap(Phases.Start);
        var answer = front.WaitForCompletionAsync(id, ct);
        // The signal must come after the long-poll is held: otherwise its first read could find the instance completed.
        while (!answer.IsCompleted && (await front.GetNodeCountersAsync(ct)).LongPollsWaiting < 1)
        {
        }

        clock.Lap(LongPollHeld);
        await front.SignalAsync(id, "go", new { value = index }, ct);
        clock.Lap(Phases.SignalPublish);
        var done = await answer;
        var answeredAt = DateTimeOffset.UtcNow;
        clock.Lap(Phases.SignalToCompletion);
        if (Json.NotCompleted(done) is { } problem)
        {
            return clock.Finish(problem);
        }

        var committedAt = DateTimeOffset.Parse(Json.Text(done["updatedAt"])!, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal);
        clock.Record(CommitToAnswer, Math.Max(0, (answeredAt - committedAt).TotalMilliseconds));
        return clock.Finish(done["output"]?["result"]?["value"]?.GetValue<int>() == index ? null : $"unexpected output {done["output"]?.ToJsonString()}");
    }
}
