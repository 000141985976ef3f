using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>Parallel steps: the fork, each branch resumed on its own, the join, and a branch that ends the instance.</summary>
public sealed class ParallelExecutionTests
{
    private const string TwoReports = """
        { "name": "claim", "steps": [
          { "id": "gather", "type": "parallel", "branches": [
            { "name": "assessor", "steps": [
              { "id": "wait-assessor", "type": "waitForSignal", "signal": "assessor-report", "output": "assessor" } ] },
            { "name": "police", "steps": [
              { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police", "timeout": "PT1H", "onTimeout": "no-police" },
              { "id": "record", "type": "assign", "set": { "clear": "vars.police.atFault !== 'insured'" }, "next": "end-police" },
              { "id": "no-police", "type": "assign", "set": { "clear": "false" } },
              { "id": "end-police", "type": "assign", "set": { "policeDone": "true" } } ] } ] },
          { "id": "done", "type": "complete", "result": "({ assessor: vars.assessor, clear: vars.clear })" } ] }
        """;

    [Fact]
    public void A_parallel_step_starts_every_branch_in_order_and_waits_in_the_parallel_step()
    {
        var driver = For(TwoReports);

        var commit = driver.Start();

        Assert.Equal(["InstanceStarted", "ParallelStarted", "WaitStarted", "WaitStarted"], HistoryTypes(commit));
        Assert.Equal([null, "gather", "wait-assessor", "wait-police"], commit.History.Select(h => h.StepId));
        AssertJson("""{ "branches": ["assessor", "police"] }""", EventData(commit, "ParallelStarted"));
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal(WaitKind.Parallel, commit.Instance.WaitKind);
        Assert.Equal("gather", commit.Instance.WaitStepId);
        var timeout = NewSignal(commit, "$timeout");
        Assert.Equal(driver.NowMs + 3_600_000, timeout.DueAtMs);
        var branches = commit.Instance.ParallelBranches();
        Assert.Equal(["assessor", "police"], branches.Select(b => b.Name));
        Assert.Equal([("wait-assessor", "assessor-report", (Guid?)null), ("wait-police", "police-report", timeout.Id)],
            branches.Select(b => (b.StepId!, b.Signal!, b.SignalId)));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Each_branch_resumes_on_its_own_signal_in_either_order_and_the_last_one_to_join_continues_after_the_parallel_step(bool assessorFirst)
    {
        var driver = For(TwoReports);
        var timeout = NewSignal(driver.Start(), "$timeout");
        var assessor = driver.Signal("assessor-report", """{ "damage": 1200 }""");
        var police = driver.Signal("police-report", """{ "atFault": "other" }""");

        var first = driver.Send(assessorFirst ? assessor : police);
        var second = driver.Send(assessorFirst ? police : assessor);

        string[] assessorRun = ["SignalReceived", "BranchJoined"];
        string[] policeRun = ["SignalReceived", "StepCompleted", "StepCompleted", "BranchJoined"];
        Assert.Equal(assessorFirst ? assessorRun : policeRun, HistoryTypes(first));
        Assert.Equal(InstanceStatus.Waiting, first.Instance.Status);
        Assert.Equal(WaitKind.Parallel, first.Instance.WaitKind);
        AssertJson($$"""{ "branch": "{{(assessorFirst ? "assessor" : "police")}}" }""", EventData(first, "BranchJoined"));
        Assert.Equal([..(assessorFirst ? policeRun : assessorRun), "ParallelJoined", "InstanceCompleted"], HistoryTypes(second));
        Assert.Equal(InstanceStatus.Completed, second.Instance.Status);
        Assert.Null(second.Instance.BranchesJson);
        AssertJson("""{ "assessor": { "damage": 1200 }, "clear": true }""", System.Text.Json.Nodes.JsonNode.Parse(second.Instance.OutputJson!));
        var policeCommit = assessorFirst ? second : first;
        Assert.Contains(new SignalTransition(timeout.Id, SignalStatus.Cancelled, null), policeCommit.SignalTransitions);
        Assert.DoesNotContain(assessorFirst ? first.SignalTransitions : second.SignalTransitions, t => t.SignalId == timeout.Id);
    }

    [Fact]
    public void A_branch_timeout_resumes_only_that_branch()
    {
        var driver = For(TwoReports);
        var timeout = NewSignal(driver.Start(), "$timeout");
        driver.Advance(TimeSpan.FromHours(1));

        var commit = driver.Send(timeout);

        Assert.Equal(["TimedOut", "StepCompleted", "StepCompleted", "BranchJoined"], HistoryTypes(commit));
        Assert.Equal("wait-police", commit.History[0].StepId);
        Assert.Equal(WaitKind.Parallel, commit.Instance.WaitKind);
        Assert.Equal("wait-assessor", Assert.Single(commit.Instance.ParallelBranches(), b => !b.Joined).StepId);
        AssertJson("""{ "clear": false, "policeDone": true }""", Variables(commit));
    }

    [Fact]
    public void Branches_that_do_not_wait_join_at_once_and_the_run_goes_on_after_the_parallel_step()
    {
        var commit = For("""
            { "name": "t", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" } } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "assign", "set": { "b": "vars.a + 1" } } ] } ] },
              { "id": "done", "type": "complete", "result": "vars.b" } ] }
            """).Start();

        Assert.Equal(["InstanceStarted", "ParallelStarted", "StepCompleted", "BranchJoined", "StepCompleted", "BranchJoined", "ParallelJoined", "InstanceCompleted"],
            HistoryTypes(commit));
        Assert.Equal("2", commit.Instance.OutputJson);
    }

    [Fact]
    public void A_signal_parked_before_the_parallel_step_is_consumed_as_its_branch_starts()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "hold", "type": "delay", "duration": "PT1M" },
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "output": "x" } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "waitForSignal", "signal": "y" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);
        var timer = NewSignal(driver.Start(), "$timer");
        var early = driver.Signal("x", "42");
        driver.Send(early);

        var commit = driver.Send(timer);

        Assert.Equal(["TimerFired", "ParallelStarted", "SignalReceived", "BranchJoined", "WaitStarted"], HistoryTypes(commit));
        Assert.Contains(new SignalTransition(early.Id, SignalStatus.Handled, null), commit.SignalTransitions);
        Assert.Equal(0, commit.Instance.ParkedSignals);
        AssertJson("""{ "x": 42 }""", Variables(commit));
    }

    [Fact]
    public void When_two_branches_wait_for_the_same_signal_the_branch_listed_first_receives_it()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "go", "output": "a" } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "waitForSignal", "signal": "go", "output": "b" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();

        var first = driver.Send(driver.Signal("go", "1"));
        var second = driver.Send(driver.Signal("go", "2"));

        Assert.Equal("a1", first.History[0].StepId);
        Assert.Equal("b1", second.History[0].StepId);
        AssertJson("""{ "a": 1, "b": 2 }""", Variables(second));
        Assert.Equal(InstanceStatus.Completed, second.Instance.Status);
    }

    [Fact]
    public void A_fail_in_a_branch_ends_the_instance_and_closes_the_other_branches_tasks()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "review", "steps": [ { "id": "look", "type": "humanTask", "title": "Look" } ] },
                { "name": "check", "steps": [
                  { "id": "wait-check", "type": "waitForSignal", "signal": "check", "output": "check" },
                  { "id": "ok", "type": "decision", "branches": [ { "when": "vars.check.ok", "next": "pass" } ], "otherwise": "reject" },
                  { "id": "reject", "type": "fail", "reason": "'check failed'" },
                  { "id": "pass", "type": "assign", "set": { "passed": "true" } } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);
        var task = Assert.Single(driver.Start().NewTasks);

        var commit = driver.Send(driver.Signal("check", """{ "ok": false }"""));

        Assert.Equal(["SignalReceived", "BranchTaken", "InstanceFailed"], HistoryTypes(commit));
        Assert.Equal(InstanceStatus.Failed, commit.Instance.Status);
        Assert.Equal("check failed", commit.Instance.Error);
        Assert.Equal([task.Id], commit.ClosedTasks);
        Assert.True(commit.CloseOpenWork);
        Assert.Null(commit.Instance.WaitKind);
        Assert.Null(commit.Instance.BranchesJson);
    }

    [Fact]
    public void An_expression_failure_in_a_branch_fails_the_run_at_that_step()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "go" }, { "id": "a2", "type": "assign", "set": { "x": "signal.missing.field" } } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "waitForSignal", "signal": "other" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);
        driver.Start();

        var run = driver.TryResume(driver.Signal("go", "{}"));

        Assert.False(run.Succeeded);
        Assert.Equal("a2", run.FailedStepId);
        Assert.StartsWith("step 'a2': expression 'signal.missing.field' threw: ", run.Error, StringComparison.Ordinal);
    }
}
