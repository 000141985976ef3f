using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>Steps that run without waiting (assign, decision, complete, fail), expression failures and the loop guard.</summary>
public sealed class StepFlowTests
{
    [Fact]
    public void A_first_run_that_reaches_complete_stores_a_new_instance_already_completed_with_its_result()
    {
        var driver = For("""
            { "name": "calc", "variables": { "rate": 0.5 }, "steps": [
              { "id": "price", "type": "assign", "set": { "premium": "input.sum * vars.rate", "doubled": "vars.premium * 2" } },
              { "id": "done", "type": "complete", "result": "({ premium: vars.premium, doubled: vars.doubled, who: instance.businessKey })" } ] }
            """);

        var commit = driver.Start("""{ "sum": 100 }""", businessKey: "order-7");

        Assert.True(commit.IsNew);
        Assert.Equal(-1, commit.ExpectedVersion);
        Assert.Equal(InstanceStatus.Completed, commit.Instance.Status);
        Assert.Equal(driver.Now, commit.Instance.CompletedAt);
        Assert.Null(commit.Instance.WaitKind);
        Assert.True(commit.CloseOpenWork);
        Assert.Equal(["InstanceStarted", "StepCompleted", "InstanceCompleted"], HistoryTypes(commit));
        Assert.Equal([null, "price", "done"], commit.History.Select(h => h.StepId));
        Assert.Equal([0, 1, 2], commit.History.Select(h => h.Sequence));
        Assert.All(commit.History, h => Assert.Equal(commit.Instance.Id, h.InstanceId));
        AssertJson("""{ "definition": "calc", "version": 1, "businessKey": "order-7" }""", EventData(commit, "InstanceStarted"));
        AssertJson("""{ "rate": 0.5, "premium": 50, "doubled": 100 }""", Variables(commit));
        AssertJson("""{ "premium": 50, "doubled": 100, "who": "order-7" }""", System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
        Assert.Empty(commit.NewSignals);
        Assert.Empty(commit.SignalTransitions);
    }

    [Fact]
    public void Assigned_values_are_stored_as_JSON()
    {
        var commit = For("""
            { "name": "t", "steps": [
              { "id": "a", "type": "assign", "set": { "u": "undefined", "n": "NaN", "f": "({ keep: 1, drop: () => 1 })", "d": "new Date(0)", "s": "'text'" } },
              { "id": "done", "type": "complete" } ] }
            """).Start();

        AssertJson("""{ "u": null, "n": null, "f": { "keep": 1 }, "d": "1970-01-01T00:00:00.000Z", "s": "text" }""", Variables(commit));
        Assert.Null(commit.Instance.OutputJson);
    }

    [Fact]
    public void Fail_ends_the_instance_failed_with_its_reason_as_error()
    {
        var commit = For("""{ "name": "t", "steps": [ { "id": "no", "type": "fail", "reason": "'declined: ' + input.why" } ] }""")
            .Start("""{ "why": "too risky" }""");

        Assert.Equal(InstanceStatus.Failed, commit.Instance.Status);
        Assert.Equal("declined: too risky", commit.Instance.Error);
        Assert.True(commit.CloseOpenWork);
        Assert.Equal(["InstanceStarted", "InstanceFailed"], HistoryTypes(commit));
        AssertJson("""{ "reason": "declined: too risky" }""", EventData(commit, "InstanceFailed"));
    }

    [Fact]
    public void A_fail_reason_of_null_is_failed()
    {
        var commit = For("""{ "name": "t", "steps": [ { "id": "no", "type": "fail", "reason": "null" } ] }""").Start();

        Assert.Equal("failed", commit.Instance.Error);
    }

    [Theory]
    [InlineData("""{ "n": 5 }""", "big", """, "branch": 0""")]
    [InlineData("""{ "n": 1 }""", "one", """, "branch": 1""")]
    [InlineData("""{ "n": 0 }""", "small", "")]
    public void A_decision_takes_the_first_branch_whose_condition_is_truthy_or_else_otherwise(string input, string taken, string branch)
    {
        var commit = For("""
            { "name": "t", "steps": [
              { "id": "choose", "type": "decision", "branches": [ { "when": "input.n > 1", "next": "big" }, { "when": "input.n", "next": "one" }, { "when": "input.n > 2", "next": "never" } ], "otherwise": "small" },
              { "id": "big", "type": "complete", "result": "'big'" },
              { "id": "one", "type": "complete", "result": "'one'" },
              { "id": "never", "type": "complete", "result": "'never'" },
              { "id": "small", "type": "complete", "result": "'small'" } ] }
            """).Start(input);

        Assert.Equal(["InstanceStarted", "BranchTaken", "InstanceCompleted"], HistoryTypes(commit));
        AssertJson($$"""{ "next": "{{taken}}"{{branch}} }""", EventData(commit, "BranchTaken"));
        Assert.Equal($"\"{taken}\"", commit.Instance.OutputJson);
    }

    [Fact]
    public void A_decision_with_no_matching_branch_and_no_otherwise_fails_the_run()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "choose", "type": "decision", "branches": [ { "when": "input.n > 1", "next": "done" } ] },
              { "id": "done", "type": "complete" } ] }
            """);

        var run = driver.StartFailing("""{ "n": 0 }""");

        Assert.Null(run.Commit);
        Assert.Equal("choose", run.FailedStepId);
        Assert.Equal("step 'choose': no branch of decision 'choose' matched and it has no 'otherwise'", run.Error);
    }

    [Fact]
    public void An_expression_that_throws_fails_the_run_and_nothing_of_it_is_kept()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "a", "type": "assign", "set": { "x": "1" } },
              { "id": "b", "type": "assign", "set": { "y": "vars.missing.deeper" } },
              { "id": "done", "type": "complete" } ] }
            """);

        var run = driver.StartFailing();

        Assert.False(run.Succeeded);
        Assert.Equal("b", run.FailedStepId);
        Assert.StartsWith("step 'b': expression 'vars.missing.deeper' threw: ", run.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_start_signal_retries_the_first_run_from_the_first_step_and_consumes_signals_parked_meanwhile()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "a", "type": "assign", "set": { "x": "1" } },
              { "id": "w", "type": "waitForSignal", "signal": "go", "output": "go" },
              { "id": "w2", "type": "waitForSignal", "signal": "more" },
              { "id": "done", "type": "complete" } ] }
            """);
        driver.StoreUnstarted("an earlier attempt failed");
        var early = driver.Signal("go", """{ "early": true }""");
        Assert.Equal(SignalStatus.Parked, Assert.Single(driver.Send(early).SignalTransitions).Status);
        var start = driver.Signal("$start");

        var commit = driver.Send(start);

        Assert.Equal(
            [new SignalTransition(start.Id, SignalStatus.Handled, start.LeaseToken), new SignalTransition(early.Id, SignalStatus.Handled, null)],
            commit.SignalTransitions);
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Null(commit.Instance.Error);
        Assert.Equal(0, commit.Instance.ParkedSignals);
        Assert.Equal(["StepCompleted", "SignalReceived", "WaitStarted"], HistoryTypes(commit));
        Assert.Equal([2, 3, 4], commit.History.Select(h => h.Sequence));
        AssertJson("""{ "x": 1, "go": { "early": true } }""", Variables(commit));
    }

    [Fact]
    public void A_start_signal_against_the_same_data_fails_again_at_the_same_step()
    {
        var driver = For("""
            { "name": "t", "steps": [ { "id": "a", "type": "assign", "set": { "x": "input.value.length" } }, { "id": "done", "type": "complete" } ] }
            """);
        var first = driver.StartFailing();

        var retry = driver.TryResume(driver.Signal("$start"));

        Assert.False(retry.Succeeded);
        Assert.Equal("a", retry.FailedStepId);
        Assert.Equal(first.Error, retry.Error);
    }

    [Fact]
    public void An_expression_failure_at_a_step_with_an_error_path_continues_there_with_the_error_and_keeps_earlier_assignments()
    {
        var commit = For("""
            { "name": "t", "steps": [
              { "id": "price", "type": "assign", "set": { "first": "1", "premium": "rates[input.product] * 2", "never": "2" }, "onError": "manual", "errorOutput": "pricingError" },
              { "id": "done", "type": "complete", "result": "'priced'" },
              { "id": "manual", "type": "complete", "result": "vars.pricingError" } ] }
            """).Start("""{ "product": "car" }""");

        Assert.Equal(InstanceStatus.Completed, commit.Instance.Status);
        Assert.Equal(["InstanceStarted", "StepFailed", "InstanceCompleted"], HistoryTypes(commit));
        var failed = EventData(commit, "StepFailed")!;
        Assert.Equal("manual", (string?)failed["next"]);
        Assert.StartsWith("expression 'rates[input.product] * 2' threw: ", (string?)failed["error"], StringComparison.Ordinal);
        var variables = Variables(commit)!;
        Assert.Equal(1, (int?)variables["first"]);
        Assert.Null(variables["never"]);
        Assert.Equal("price", (string?)variables["pricingError"]!["step"]);
        Assert.Equal((string?)failed["error"], (string?)variables["pricingError"]!["message"]);
        AssertJson(variables["pricingError"]!.ToJsonString(), System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
    }

    [Fact]
    public void A_decision_with_no_match_takes_its_error_path_when_it_has_one()
    {
        var commit = For("""
            { "name": "t", "steps": [
              { "id": "choose", "type": "decision", "branches": [ { "when": "false", "next": "done" } ], "onError": "fallback" },
              { "id": "done", "type": "complete" },
              { "id": "fallback", "type": "fail", "reason": "'unrouted'" } ] }
            """).Start();

        Assert.Equal(["InstanceStarted", "StepFailed", "InstanceFailed"], HistoryTypes(commit));
        AssertJson("""{ "error": "no branch of decision 'choose' matched and it has no 'otherwise'", "next": "fallback" }""", EventData(commit, "StepFailed"));
        Assert.Equal("unrouted", commit.Instance.Error);
    }

    [Fact]
    public void A_value_that_cannot_be_stored_as_JSON_fails_the_run()
    {
        var run = For("""
            { "name": "t", "steps": [ { "id": "a", "type": "assign", "set": { "c": "(() => { const o = {}; o.self = o; return o; })()" } }, { "id": "done", "type": "complete" } ] }
            """).StartFailing();

        Assert.Equal("a", run.FailedStepId);
        Assert.Contains("produced a value that is not JSON", run.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_loop_without_a_wait_point_fails_the_run_after_MaxStepsPerRun_steps()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "count", "type": "assign", "set": { "n": "(vars.n ?? 0) + 1" } },
              { "id": "again", "type": "decision", "branches": [ { "when": "true", "next": "count" } ] } ] }
            """, maxStepsPerRun: 5);

        var run = driver.StartFailing();

        Assert.Equal("again", run.FailedStepId);
        Assert.Equal("the run executed 5 steps without reaching a wait point (Engine:MaxStepsPerRun)", run.Error);
    }

    [Fact]
    public void A_loop_of_cheap_steps_within_MaxStepsPerRun_is_stopped_by_the_run_time_budget()
    {
        // Every step reads the clock once; this clock moves a millisecond a read, so 10,000 steps take 10 s of it.
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "count", "type": "assign", "set": { "n": "(vars.n ?? 0) + 1" } },
              { "id": "again", "type": "decision", "branches": [ { "when": "vars.n < 5000", "next": "count" } ], "otherwise": "done" },
              { "id": "done", "type": "complete" } ] }
            """, new EngineOptions { MaxStepsPerRun = 1_000_000, MaxRunTime = TimeSpan.FromSeconds(2) }, new SteppingClock(TimeSpan.FromMilliseconds(1)));

        var run = driver.StartFailing();

        Assert.Equal("the run took more than 2000 ms without reaching a wait point (Engine:MaxRunTime)", run.Error);
        Assert.True(run.FailedStepId is "count" or "again", run.FailedStepId);
    }

    [Fact]
    public void The_same_loop_completes_when_its_budget_allows_it()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "count", "type": "assign", "set": { "n": "(vars.n ?? 0) + 1" } },
              { "id": "again", "type": "decision", "branches": [ { "when": "vars.n < 5000", "next": "count" } ], "otherwise": "done" },
              { "id": "done", "type": "complete" } ] }
            """, new EngineOptions { MaxStepsPerRun = 1_000_000, MaxRunTime = TimeSpan.FromSeconds(11) }, new SteppingClock(TimeSpan.FromMilliseconds(1)));

        Assert.Equal(InstanceStatus.Completed, driver.Start().Instance.Status);
    }

    /// <summary>A clock whose timestamp moves on by a fixed step each time it is read.</summary>
    private sealed class SteppingClock(TimeSpan step) : TimeProvider
    {
        private long _now;

        public override long GetTimestamp() => _now += (long)(step.TotalSeconds * TimestampFrequency);
    }

    [Fact]
    public void A_run_may_execute_exactly_MaxStepsPerRun_steps_counting_the_step_where_it_stops()
    {
        const string json = """
            { "name": "t", "steps": [
              { "id": "a", "type": "assign", "set": { "n": "1" } },
              { "id": "b", "type": "assign", "set": { "n": "2" } },
              { "id": "w", "type": "waitForSignal", "signal": "go" },
              { "id": "done", "type": "complete" } ] }
            """;

        Assert.Equal(InstanceStatus.Waiting, For(json, maxStepsPerRun: 3).Start().Instance.Status);
        Assert.Equal("w", For(json, maxStepsPerRun: 2).StartFailing().FailedStepId);
    }

    [Fact]
    public void Variables_named_like_members_of_a_JavaScript_object_are_stored_like_any_other()
    {
        // A step cannot assign __proto__ (the compiler refuses it: it would replace the prototype of vars); an initial
        // variable of that name is an ordinary property, read and kept like the others.
        var commit = For("""
            { "name": "t", "variables": { "toString": "initial", "__proto__": { "p": 1 } }, "steps": [
              { "id": "a", "type": "assign", "set": { "constructor": "({ x: 1 })", "prototype": "2", "valueOf": "vars.toString + '!'", "p": "vars.__proto__.p" } },
              { "id": "done", "type": "complete", "result": "vars" } ] }
            """).Start();

        var expected = """{ "toString": "initial", "__proto__": { "p": 1 }, "constructor": { "x": 1 }, "prototype": 2, "valueOf": "initial!", "p": 1 }""";
        AssertJson(expected, Variables(commit));
        AssertJson(expected, System.Text.Json.Nodes.JsonNode.Parse(commit.Instance.OutputJson!));
    }
}
