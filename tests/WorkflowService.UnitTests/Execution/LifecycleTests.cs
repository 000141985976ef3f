using System.Text.Json.Nodes;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>Cancel (with and without a cancel path), suspend and resume, faults, and signals to ended instances.</summary>
public sealed class LifecycleTests
{
    private const string Review = """
        { "name": "t", "steps": [ { "id": "look", "type": "humanTask", "title": "Look" }, { "id": "done", "type": "complete" } ] }
        """;

    private const string WithCancelPath = """
        { "name": "t", "onCancel": "compensate", "steps": [
          { "id": "offer", "type": "waitForSignal", "signal": "accepted", "timeout": "P14D", "onTimeout": "done" },
          { "id": "done", "type": "complete" },
          { "id": "compensate", "type": "assign", "set": { "refunded": "true" } },
          { "id": "report", "type": "complete", "result": "({ refunded: vars.refunded })" } ] }
        """;

    [Fact]
    public void Cancel_ends_the_instance_at_once_and_closes_its_open_task()
    {
        var driver = For(Review);
        var task = Assert.Single(driver.Start().NewTasks);

        var commit = driver.Apply(WorkflowExecutor.Cancel(driver.Instance, "customer withdrew", driver.Instant));

        Assert.Equal(1, commit.ExpectedVersion);
        Assert.Equal(InstanceStatus.Cancelled, commit.Instance.Status);
        Assert.Equal("customer withdrew", commit.Instance.Error);
        Assert.Equal(driver.Now, commit.Instance.CompletedAt);
        Assert.Null(commit.Instance.WaitKind);
        Assert.Null(commit.Instance.WaitTaskId);
        Assert.Equal([task.Id], commit.ClosedTasks);
        Assert.True(commit.CloseOpenWork);
        Assert.Equal(["InstanceCancelled"], HistoryTypes(commit));
        AssertJson("""{ "reason": "customer withdrew" }""", EventData(commit, "InstanceCancelled"));
    }

    [Fact]
    public void A_cooperative_cancel_without_a_cancel_path_cancels_at_once()
    {
        var driver = For(Review);
        var task = Assert.Single(driver.Start().NewTasks);

        var commit = Succeeded(driver.Executor.CancelWithPath(driver.Definition, driver.Instance, "stop", driver.Instant));

        Assert.Equal(InstanceStatus.Cancelled, commit.Instance.Status);
        Assert.Equal([task.Id], commit.ClosedTasks);
        Assert.Equal(["InstanceCancelled"], HistoryTypes(commit));
    }

    [Fact]
    public void A_cooperative_cancel_runs_the_cancel_path_and_ends_cancelled_with_the_paths_result()
    {
        var driver = For(WithCancelPath);
        var timeout = NewSignal(driver.Start(), "$timeout");

        var commit = Succeeded(driver.Executor.CancelWithPath(driver.Definition, driver.Instance, "withdrawn", driver.Instant));

        Assert.Equal(new SignalTransition(timeout.Id, SignalStatus.Cancelled, null), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["CancelPathStarted", "StepCompleted", "InstanceCancelled"], HistoryTypes(commit));
        Assert.Equal(["compensate", "compensate", "report"], commit.History.Select(h => h.StepId));
        AssertJson("""{ "reason": "withdrawn" }""", EventData(commit, "CancelPathStarted"));
        AssertJson("""{ "reason": "withdrawn" }""", EventData(commit, "InstanceCancelled"));
        Assert.Equal(InstanceStatus.Cancelled, commit.Instance.Status);
        Assert.Equal("withdrawn", commit.Instance.Error);
        AssertJson("""{ "refunded": true }""", JsonNode.Parse(commit.Instance.OutputJson!));
        Assert.True(commit.CloseOpenWork);
        Assert.Null(commit.Instance.WaitKind);
    }

    [Fact]
    public void A_cancel_path_that_ends_with_fail_still_ends_the_instance_cancelled_with_the_cancel_reason()
    {
        var driver = For("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "w", "type": "waitForSignal", "signal": "go", "next": "done" },
              { "id": "undo", "type": "fail", "reason": "'undone'" },
              { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();

        var commit = Succeeded(driver.Executor.CancelWithPath(driver.Definition, driver.Instance, null, driver.Instant));

        Assert.Equal(InstanceStatus.Cancelled, commit.Instance.Status);
        Assert.Equal("cancelled", commit.Instance.Error);
        Assert.Equal(["CancelPathStarted", "InstanceCancelled"], HistoryTypes(commit));
        AssertJson("""{ "reason": "cancelled" }""", EventData(commit, "InstanceCancelled"));
    }

    [Fact]
    public void A_cancel_path_that_fails_returns_the_failure_so_that_the_instance_is_cancelled_at_once_instead()
    {
        var driver = For("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "w", "type": "waitForSignal", "signal": "go", "next": "done" },
              { "id": "undo", "type": "assign", "set": { "x": "vars.nothing.here" } },
              { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();

        var run = driver.Executor.CancelWithPath(driver.Definition, driver.Instance, "stop", driver.Instant);

        Assert.False(run.Succeeded);
        Assert.Equal("undo", run.FailedStepId);
    }

    [Fact]
    public void Cancelling_an_instance_in_a_parallel_step_closes_every_branchs_task_and_timer()
    {
        var driver = For("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "humanTask", "title": "A" } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "delay", "duration": "PT1H" } ] },
                { "name": "c", "steps": [ { "id": "c1", "type": "humanTask", "title": "C" } ] } ] },
              { "id": "done", "type": "complete" },
              { "id": "undo", "type": "complete" } ] }
            """);
        var started = driver.Start();
        var timer = NewSignal(started, "$timer");

        var withPath = Succeeded(driver.Executor.CancelWithPath(driver.Definition, driver.Instance, "stop", driver.Instant));
        var atOnce = WorkflowExecutor.Cancel(driver.Instance, "stop", driver.Instant);

        Assert.Equal(started.NewTasks.Select(t => t.Id), withPath.ClosedTasks);
        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Cancelled, null), Assert.Single(withPath.SignalTransitions));
        Assert.Null(withPath.Instance.BranchesJson);
        Assert.Equal(started.NewTasks.Select(t => t.Id), atOnce.ClosedTasks);
        Assert.True(atOnce.CloseOpenWork);
        Assert.Null(atOnce.Instance.BranchesJson);
    }

    [Fact]
    public void A_cancelled_child_tells_its_parent()
    {
        var driver = For(Review);
        var parentId = Guid.CreateVersion7();
        var waitId = Guid.CreateVersion7();
        driver.Start(parentId: parentId, parentWaitId: waitId);

        var commit = WorkflowExecutor.Cancel(driver.Instance, "stop", driver.Instant);

        var ended = NewSignal(commit, "$child");
        Assert.Equal(parentId, ended.InstanceId);
        Assert.Equal(waitId, ended.ParentWaitId);
        AssertJson($$"""{ "instanceId": "{{driver.Instance.Id}}", "status": "Cancelled", "error": "stop" }""", JsonNode.Parse(ended.PayloadJson!));
    }

    [Fact]
    public void A_suspended_instance_parks_what_arrives_even_its_own_timer_and_applies_it_after_it_is_resumed()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "offer", "type": "waitForSignal", "signal": "accepted", "output": "acceptance", "timeout": "PT1M", "onTimeout": "late" },
              { "id": "done", "type": "complete" },
              { "id": "late", "type": "fail", "reason": "'late'" } ] }
            """);
        var timer = NewSignal(driver.Start(), "$timeout");

        var suspended = driver.Apply(WorkflowExecutor.Suspend(driver.Instance, "investigating", driver.Instant));

        Assert.Equal(InstanceStatus.Suspended, suspended.Instance.Status);
        Assert.Equal("offer", suspended.Instance.WaitStepId);
        Assert.Equal(["InstanceSuspended"], HistoryTypes(suspended));
        Assert.Equal("offer", suspended.History[0].StepId);
        AssertJson("""{ "reason": "investigating" }""", EventData(suspended, "InstanceSuspended"));

        var accepted = driver.Signal("accepted", "\"ok\"");
        var parkedSignal = driver.Send(accepted);
        driver.Advance(TimeSpan.FromMinutes(1));
        var parkedTimer = driver.Send(timer);

        Assert.Equal(new SignalTransition(accepted.Id, SignalStatus.Parked, accepted.LeaseToken), Assert.Single(parkedSignal.SignalTransitions));
        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Parked, timer.LeaseToken), Assert.Single(parkedTimer.SignalTransitions));
        Assert.Equal(["SignalParked"], HistoryTypes(parkedTimer));
        Assert.Equal(2, driver.Instance.ParkedSignals);
        Assert.Equal(InstanceStatus.Suspended, driver.Instance.Status);

        var (resumed, requeued) = driver.Unsuspend();

        Assert.Equal(InstanceStatus.Waiting, resumed.Instance.Status);
        Assert.Equal(0, resumed.Instance.ParkedSignals);
        Assert.Equal(["InstanceResumed"], HistoryTypes(resumed));
        Assert.Equal([accepted.Id, timer.Id], requeued.Select(s => s.Id));

        var applied = driver.Send(requeued[0]);

        Assert.Equal(InstanceStatus.Completed, applied.Instance.Status);
        AssertJson("""{ "acceptance": "ok" }""", Variables(applied));
        Assert.Contains(new SignalTransition(timer.Id, SignalStatus.Cancelled, null), applied.SignalTransitions);
    }

    [Fact]
    public void Fault_dead_letters_the_signal_and_records_the_last_error()
    {
        var driver = For(Review);
        driver.Start();
        var signal = driver.Claimed(driver.Claimed(driver.Claimed(driver.Signal("$task"))));

        var commit = WorkflowExecutor.Fault(driver.Instance, signal, "step 'x': boom", driver.Instant);

        Assert.Equal(InstanceStatus.Faulted, commit.Instance.Status);
        Assert.Equal("step 'x': boom", commit.Instance.Error);
        Assert.Equal(new SignalTransition(signal.Id, SignalStatus.DeadLettered, signal.LeaseToken, "step 'x': boom"), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["InstanceFaulted"], HistoryTypes(commit));
        Assert.Equal("look", commit.History[0].StepId);
        AssertJson($$"""{ "error": "step 'x': boom", "signal": "$task", "signalId": "{{signal.Id}}", "attempts": 3 }""", EventData(commit, "InstanceFaulted"));
    }

    [Fact]
    public void A_faulted_instance_parks_the_signals_it_receives()
    {
        var driver = For(Review);
        driver.Start();
        driver.Apply(WorkflowExecutor.Fault(driver.Instance, driver.Claimed(driver.Signal("$task")), "boom", driver.Instant));
        var signal = driver.Signal("later");

        var commit = driver.Send(signal);

        Assert.Equal(SignalStatus.Parked, Assert.Single(commit.SignalTransitions).Status);
        Assert.Equal(InstanceStatus.Faulted, commit.Instance.Status);
    }

    [Theory]
    [InlineData("""{ "name": "t", "steps": [ { "id": "done", "type": "complete" } ] }""", "Completed")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "no", "type": "fail", "reason": "'no'" } ] }""", "Failed")]
    public void A_signal_to_an_ended_instance_is_closed_as_unmatched(string json, string status)
    {
        var driver = For(json);
        driver.Start();
        var late = driver.Signal("go");

        var commit = driver.Send(late);

        Assert.Equal(new SignalTransition(late.Id, SignalStatus.Unmatched, late.LeaseToken, $"instance ended {status} without waiting for 'go'"),
            Assert.Single(commit.SignalTransitions));
        Assert.Equal(["SignalUnmatched"], HistoryTypes(commit));
        Assert.Null(commit.History[0].StepId);
        AssertJson($$"""{ "signal": "go", "signalId": "{{late.Id}}" }""", EventData(commit, "SignalUnmatched"));
        Assert.Equal(status, commit.Instance.Status.ToString());
    }

    [Fact]
    public void An_engine_signal_to_an_ended_instance_is_cancelled_without_history()
    {
        var driver = For(Review);
        driver.Start();
        driver.Apply(WorkflowExecutor.Cancel(driver.Instance, null, driver.Instant));
        var timer = driver.Signal("$timer");

        var commit = driver.Send(timer);

        Assert.Equal(new SignalTransition(timer.Id, SignalStatus.Cancelled, timer.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Empty(commit.History);
        Assert.Equal(InstanceStatus.Cancelled, commit.Instance.Status);
    }

    [Fact]
    public void An_engine_signal_that_no_wait_expects_is_cancelled_not_parked()
    {
        var driver = For("""{ "name": "t", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go" }, { "id": "done", "type": "complete" } ] }""");
        driver.Start();
        var stray = driver.Signal("$timer");

        var commit = driver.Send(stray);

        Assert.Equal(new SignalTransition(stray.Id, SignalStatus.Cancelled, stray.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Empty(commit.History);
        Assert.Equal(0, commit.Instance.ParkedSignals);
        Assert.Equal(WaitKind.Signal, commit.Instance.WaitKind);
    }
}
