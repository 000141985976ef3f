using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>The wait points: signals (with and without timeout, early ones), delays and human tasks.</summary>
public sealed class WaitPointTests
{
    private const string SignalWithTimeout = """
        { "name": "t", "steps": [
          { "id": "offer", "type": "waitForSignal", "signal": "accepted", "output": "acceptance", "timeout": "PT1M", "onTimeout": "expired" },
          { "id": "done", "type": "complete", "result": "({ acceptance: vars.acceptance, signal })" },
          { "id": "expired", "type": "complete", "result": "({ expired: true, acceptance: vars.acceptance ?? 'unset', signal })" } ] }
        """;

    [Fact]
    public void A_signal_wait_stores_the_instance_waiting_for_that_signal_with_no_timer()
    {
        var commit = For("""
            { "name": "t", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go", "output": "go" }, { "id": "done", "type": "complete" } ] }
            """).Start();

        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal(WaitKind.Signal, commit.Instance.WaitKind);
        Assert.Equal("w", commit.Instance.WaitStepId);
        Assert.Equal("go", commit.Instance.WaitSignal);
        Assert.Null(commit.Instance.WaitSignalId);
        Assert.Empty(commit.NewSignals);
        Assert.False(commit.CloseOpenWork);
        Assert.Equal(["InstanceStarted", "WaitStarted"], HistoryTypes(commit));
        AssertJson("""{ "signal": "go" }""", EventData(commit, "WaitStarted"));
    }

    [Theory]
    [InlineData("go")]
    [InlineData("constructor")] // named like a member of a JavaScript object: stored like any other
    public void The_awaited_signal_resumes_the_wait_with_its_payload_in_output_and_in_the_signal_global(string output)
    {
        var driver = For($$"""
            { "name": "t", "steps": [
              { "id": "w", "type": "waitForSignal", "signal": "go", "output": "{{output}}" },
              { "id": "done", "type": "complete", "result": "({ fromOutput: vars.{{output}}.amount, fromSignal: signal.amount })" } ] }
            """);
        driver.Start();
        var go = driver.Signal("go", """{ "amount": 3 }""");

        var commit = driver.Send(go);

        Assert.Equal(1, commit.ExpectedVersion);
        Assert.False(commit.IsNew);
        Assert.Equal(new SignalTransition(go.Id, SignalStatus.Handled, go.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["SignalReceived", "InstanceCompleted"], HistoryTypes(commit));
        Assert.Equal([2, 3], commit.History.Select(h => h.Sequence));
        AssertJson($$"""{ "signal": "go", "signalId": "{{go.Id}}" }""", EventData(commit, "SignalReceived"));
        AssertJson($$"""{ "{{output}}": { "amount": 3 } }""", Variables(commit));
        AssertJson("""{ "fromOutput": 3, "fromSignal": 3 }""", System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
    }

    [Fact]
    public void A_signal_without_payload_sets_output_to_null()
    {
        var driver = For("""
            { "name": "t", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go", "output": "go" }, { "id": "w2", "type": "waitForSignal", "signal": "again" }, { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();

        var commit = driver.Send(driver.Signal("go"));

        AssertJson("""{ "go": null }""", Variables(commit));
    }

    [Fact]
    public void A_signal_wait_with_a_timeout_queues_its_timeout_timer_due_after_the_timeout()
    {
        var driver = For(SignalWithTimeout);

        var commit = driver.Start();

        var timer = NewSignal(commit, "$timeout");
        Assert.Single(commit.NewSignals);
        Assert.Equal(driver.NowMs + 60_000, timer.DueAtMs);
        Assert.Equal(commit.Instance.Id, timer.InstanceId);
        Assert.Equal(SignalStatus.Pending, timer.Status);
        Assert.Equal(timer.Id, commit.Instance.WaitSignalId);
        Assert.Equal("accepted", commit.Instance.WaitSignal);
    }

    [Fact]
    public void A_signal_that_arrives_before_its_timeout_cancels_the_timeout_timer()
    {
        var driver = For(SignalWithTimeout);
        var timer = NewSignal(driver.Start(), "$timeout");
        driver.Advance(TimeSpan.FromSeconds(30));
        var accepted = driver.Signal("accepted", "\"yes\"");

        var commit = driver.Send(accepted);

        Assert.Equal(
            [new SignalTransition(accepted.Id, SignalStatus.Handled, accepted.LeaseToken), new SignalTransition(timer.Id, SignalStatus.Cancelled, null)],
            commit.SignalTransitions);
        Assert.Equal(InstanceStatus.Completed, commit.Instance.Status);
        AssertJson("""{ "acceptance": "yes", "signal": "yes" }""", System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
    }

    [Fact]
    public void A_timeout_that_fires_first_goes_to_onTimeout_without_output_and_with_a_null_signal()
    {
        var driver = For(SignalWithTimeout);
        var timer = NewSignal(driver.Start(), "$timeout");
        driver.Advance(TimeSpan.FromMinutes(1));

        var commit = driver.Send(timer);

        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Handled, timer.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["TimedOut", "InstanceCompleted"], HistoryTypes(commit));
        Assert.Equal("offer", commit.History[0].StepId);
        AssertJson("""{ "signal": "accepted" }""", EventData(commit, "TimedOut"));
        AssertJson("""{ "expired": true, "acceptance": "unset", "signal": null }""", System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
        Assert.Equal(driver.Now, commit.Instance.CompletedAt);
    }

    [Fact]
    public void A_timeout_timer_whose_wait_is_already_over_is_cancelled_without_history()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "offer", "type": "waitForSignal", "signal": "accepted", "timeout": "PT1M", "onTimeout": "done" },
              { "id": "next", "type": "waitForSignal", "signal": "signed" },
              { "id": "done", "type": "complete" } ] }
            """);
        var timer = NewSignal(driver.Start(), "$timeout");
        driver.Send(driver.Signal("accepted"));

        var commit = driver.Send(timer);

        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Cancelled, timer.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Empty(commit.History);
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal("next", commit.Instance.WaitStepId);
        Assert.Equal(0, commit.Instance.ParkedSignals);
    }

    [Fact]
    public void A_signal_no_wait_matches_is_parked_at_the_current_wait()
    {
        var driver = For("""
            { "name": "t", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go" }, { "id": "later", "type": "waitForSignal", "signal": "other" }, { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();
        var other = driver.Signal("other");

        var commit = driver.Send(other);

        Assert.Equal(new SignalTransition(other.Id, SignalStatus.Parked, other.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["SignalParked"], HistoryTypes(commit));
        Assert.Equal("w", commit.History[0].StepId);
        AssertJson($$"""{ "signal": "other", "signalId": "{{other.Id}}" }""", EventData(commit, "SignalParked"));
        Assert.Equal(1, commit.Instance.ParkedSignals);
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal("w", commit.Instance.WaitStepId);
    }

    [Fact]
    public void Signal_that_arrives_before_its_wait_is_consumed_when_the_wait_starts()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "first", "type": "waitForSignal", "signal": "start" },
              { "id": "offer", "type": "waitForSignal", "signal": "accepted", "output": "acceptance", "timeout": "PT1H", "onTimeout": "late" },
              { "id": "done", "type": "complete", "result": "signal" },
              { "id": "late", "type": "fail", "reason": "'late'" } ] }
            """);
        driver.Start();
        var early = driver.Signal("accepted", """{ "by": "customer" }""");
        driver.Send(early);
        var start = driver.Signal("start", """{ "ignored": true }""");

        var commit = driver.Send(start);

        Assert.Equal(
            [new SignalTransition(start.Id, SignalStatus.Handled, start.LeaseToken), new SignalTransition(early.Id, SignalStatus.Handled, null)],
            commit.SignalTransitions);
        Assert.Empty(commit.NewSignals);
        Assert.Equal(["SignalReceived", "SignalReceived", "InstanceCompleted"], HistoryTypes(commit));
        AssertJson($$"""{ "signal": "accepted", "signalId": "{{early.Id}}", "early": true }""", System.Text.Json.Nodes.JsonNode.Parse(commit.History[1].DataJson!));
        Assert.Equal("offer", commit.History[1].StepId);
        AssertJson("""{ "acceptance": { "by": "customer" } }""", Variables(commit));
        AssertJson("""{ "by": "customer" }""", System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
        Assert.Equal(0, commit.Instance.ParkedSignals);
    }

    [Fact]
    public void One_wait_consumes_the_oldest_parked_signal_and_the_rest_end_unmatched_with_the_instance()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "hold", "type": "delay", "duration": "PT1M" },
              { "id": "w", "type": "waitForSignal", "signal": "go", "output": "go" },
              { "id": "done", "type": "complete" } ] }
            """);
        var timer = NewSignal(driver.Start(), "$timer");
        var first = driver.Signal("go", "1");
        var second = driver.Signal("go", "2");
        driver.Send(first);
        Assert.Equal(2, driver.Send(second).Instance.ParkedSignals);

        var commit = driver.Send(timer);

        Assert.Equal(
            [
                new SignalTransition(timer.Id, SignalStatus.Handled, timer.LeaseToken),
                new SignalTransition(first.Id, SignalStatus.Handled, null),
                new SignalTransition(second.Id, SignalStatus.Unmatched, null, "instance ended Completed without waiting for 'go'"),
            ],
            commit.SignalTransitions);
        Assert.Equal(["TimerFired", "SignalReceived", "SignalUnmatched", "InstanceCompleted"], HistoryTypes(commit));
        AssertJson($$"""{ "signal": "go", "signalId": "{{second.Id}}" }""", EventData(commit, "SignalUnmatched"));
        AssertJson("""{ "go": 1 }""", Variables(commit));
        Assert.Equal(0, commit.Instance.ParkedSignals);
    }

    [Fact]
    public void A_delay_queues_its_timer_and_resumes_when_it_fires_with_a_null_signal()
    {
        var driver = For("""
            { "name": "t", "steps": [ { "id": "cool-off", "type": "delay", "duration": "P1DT12H" }, { "id": "done", "type": "complete", "result": "({ signal })" } ] }
            """);

        var started = driver.Start();

        var timer = NewSignal(started, "$timer");
        Assert.Equal(driver.NowMs + (long)TimeSpan.FromHours(36).TotalMilliseconds, timer.DueAtMs);
        Assert.Equal(WaitKind.Timer, started.Instance.WaitKind);
        Assert.Equal("cool-off", started.Instance.WaitStepId);
        Assert.Equal(timer.Id, started.Instance.WaitSignalId);
        Assert.Equal(["InstanceStarted", "WaitStarted"], HistoryTypes(started));
        Assert.Equal(DateTimeOffset.FromUnixTimeMilliseconds(timer.DueAtMs), (DateTimeOffset)EventData(started, "WaitStarted")!["timer"]!);

        driver.Advance(TimeSpan.FromHours(36));
        var fired = driver.Send(timer);

        Assert.Equal(["TimerFired", "InstanceCompleted"], HistoryTypes(fired));
        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Handled, timer.LeaseToken), Assert.Single(fired.SignalTransitions));
        AssertJson("""{ "signal": null }""", System.Text.Json.Nodes.JsonNode.Parse(fired.Instance.OutputJson!));
    }

    [Fact]
    public void A_zero_delay_is_still_a_wait_point_due_at_once()
    {
        var driver = For("""{ "name": "t", "steps": [ { "id": "d", "type": "delay", "duration": "PT0S" }, { "id": "done", "type": "complete" } ] }""");

        var commit = driver.Start();

        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal(driver.NowMs, NewSignal(commit, "$timer").DueAtMs);
    }

    [Fact]
    public void A_human_task_is_created_with_its_evaluated_assignee_and_data_and_the_instance_waits_for_it()
    {
        var driver = For("""
            { "name": "quote", "steps": [
              { "id": "review", "type": "humanTask", "title": "Review high-value quotation", "role": "underwriter",
                "assignee": "input.owner", "data": "({ sum: input.sum })", "output": "review" },
              { "id": "done", "type": "complete", "result": "({ review: vars.review, signal })" } ] }
            """);

        var started = driver.Start("""{ "owner": "alice", "sum": 250000 }""");

        var task = Assert.Single(started.NewTasks);
        Assert.Equal(started.Instance.Id, task.InstanceId);
        Assert.Equal("quote", task.DefinitionName);
        Assert.Equal("review", task.StepId);
        Assert.Equal("Review high-value quotation", task.Title);
        Assert.Equal("underwriter", task.Role);
        Assert.Equal("alice", task.Assignee);
        AssertJson("""{ "sum": 250000 }""", System.Text.Json.Nodes.JsonNode.Parse(task.DataJson!));
        Assert.Equal(HumanTaskStatus.Open, task.Status);
        Assert.Equal(driver.Now, task.CreatedAt);
        Assert.Equal(WaitKind.Task, started.Instance.WaitKind);
        Assert.Equal(task.Id, started.Instance.WaitTaskId);
        Assert.Empty(started.NewSignals);
        Assert.Equal(["InstanceStarted", "TaskCreated"], HistoryTypes(started));
        AssertJson($$"""{ "taskId": "{{task.Id}}", "title": "Review high-value quotation", "assignee": "alice", "role": "underwriter" }""",
            EventData(started, "TaskCreated"));

        var completion = driver.TaskCompletion(task.Id, """{ "approved": true }""");
        var completed = driver.Send(completion);

        Assert.Equal(new SignalTransition(completion.Id, SignalStatus.Handled, completion.LeaseToken), Assert.Single(completed.SignalTransitions));
        Assert.Equal(["TaskCompleted", "InstanceCompleted"], HistoryTypes(completed));
        AssertJson($$"""{ "taskId": "{{task.Id}}" }""", EventData(completed, "TaskCompleted"));
        AssertJson("""{ "review": { "approved": true }, "signal": { "approved": true } }""", System.Text.Json.Nodes.JsonNode.Parse(completed.Instance.OutputJson!));
    }

    [Fact]
    public void A_human_task_without_assignee_or_data_has_neither()
    {
        var commit = For("""
            { "name": "t", "steps": [ { "id": "look", "type": "humanTask", "title": "Look", "assignee": "input?.nobody" }, { "id": "done", "type": "complete" } ] }
            """).Start();

        var task = Assert.Single(commit.NewTasks);
        Assert.Null(task.Assignee);
        Assert.Null(task.Role);
        Assert.Null(task.DataJson);
        AssertJson($$"""{ "taskId": "{{task.Id}}", "title": "Look" }""", EventData(commit, "TaskCreated"));
    }

    [Fact]
    public void The_completion_of_another_task_does_not_resume_a_task_wait()
    {
        var driver = For("""{ "name": "t", "steps": [ { "id": "look", "type": "humanTask", "title": "Look" }, { "id": "done", "type": "complete" } ] }""");
        driver.Start();
        var stale = driver.TaskCompletion(Guid.CreateVersion7());

        var commit = driver.Send(stale);

        Assert.Equal(new SignalTransition(stale.Id, SignalStatus.Cancelled, stale.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Empty(commit.History);
        Assert.Equal(WaitKind.Task, commit.Instance.WaitKind);
    }

    [Fact]
    public void A_run_on_a_node_whose_store_clock_reads_behind_never_dates_the_instance_before_its_last_commit()
    {
        // Found by the fault runner (paused-node on PostgreSQL): each node measures its offset to the database's clock
        // itself, so the node that applies a signal may read a few milliseconds earlier than the node that committed the
        // wait; the history then read "signal received" before "wait started".
        var driver = For("""
            { "name": "t", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go" }, { "id": "done", "type": "complete" } ] }
            """);
        var waiting = driver.Start();
        driver.Advance(TimeSpan.FromMilliseconds(-3));

        var completed = driver.Send(driver.Signal("go"));

        Assert.Equal(waiting.Instance.UpdatedAt, completed.Instance.UpdatedAt);
        Assert.Equal(waiting.Instance.UpdatedAt, completed.Instance.CompletedAt);
        Assert.All(completed.History, e => Assert.Equal(waiting.Instance.UpdatedAt, e.At));
    }
}
