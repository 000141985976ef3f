using System.Text.Json.Nodes;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>forEach steps: items started under their limit, resumed on their own waits, and the completion rules.</summary>
public sealed class ForEachExecutionTests
{
    /// <summary>A forEach over input.lines whose body waits for 'approve' per item; the rest of the step is spliced in.</summary>
    private static string Approvals(string options = "") => $$"""
        { "name": "order", "steps": [
          { "id": "lines", "type": "forEach", "items": "input.lines", {{options}}
            "result": "({ line: item, index: itemIndex, by: signal.by })", "output": "results",
            "steps": [ { "id": "approve", "type": "waitForSignal", "signal": "approve" } ] },
          { "id": "done", "type": "complete", "result": "vars.results" } ] }
        """;

    private static int[] Started(WaitPointCommit commit) =>
        commit.History.Where(h => h.Type == HistoryEventTypes.ItemStarted).Select(h => (int)JsonNode.Parse(h.DataJson!)!["index"]!).ToArray();

    private static ItemOutcome?[] Outcomes(WaitPointCommit commit) => commit.Instance.ParallelBranches().Select(b => b.Outcome).ToArray();

    [Fact]
    public void A_sequential_forEach_runs_one_item_at_a_time_and_collects_results_in_item_order()
    {
        var driver = For(Approvals("\"mode\": \"sequential\","));

        var start = driver.Start("""{ "lines": ["a", "b", "c"] }""");

        Assert.Equal([0], Started(start));
        AssertJson("""{ "items": 3, "mode": "sequential", "maxConcurrency": 1 }""", EventData(start, "ForEachStarted"));
        Assert.Equal([ItemOutcome.Open, ItemOutcome.Pending, ItemOutcome.Pending], Outcomes(start));
        Assert.Equal("0 of 3 done", ForEachItems.Progress(start.Instance.ParallelBranches())!.ToString());

        Assert.Equal([1], Started(driver.Send(driver.Signal("approve", """{ "by": "x" }"""))));
        Assert.Equal([2], Started(driver.Send(driver.Signal("approve", """{ "by": "y" }"""))));
        var last = driver.Send(driver.Signal("approve", """{ "by": "z" }"""));

        Assert.Equal(InstanceStatus.Completed, last.Instance.Status);
        AssertJson("""
            [ { "line": "a", "index": 0, "by": "x" }, { "line": "b", "index": 1, "by": "y" }, { "line": "c", "index": 2, "by": "z" } ]
            """, JsonNode.Parse(last.Instance.OutputJson!));
    }

    [Fact]
    public void A_parallel_forEach_keeps_at_most_maxConcurrency_items_open_and_a_signal_with_an_index_reaches_that_item()
    {
        var driver = For(Approvals("\"maxConcurrency\": 2,"));
        var start = driver.Start("""{ "lines": ["a", "b", "c", "d"] }""");
        Assert.Equal([0, 1], Started(start));

        // Item 3 has not started: its signal waits parked, and is taken when the item starts.
        driver.Send(driver.Signal("approve#3", """{ "by": "early" }"""));
        var second = driver.Send(driver.Signal("approve#1", """{ "by": "one" }"""));
        Assert.Equal([2], Started(second));
        Assert.Equal([ItemOutcome.Open, ItemOutcome.Succeeded, ItemOutcome.Open, ItemOutcome.Pending], Outcomes(second));

        var zero = driver.Send(driver.Signal("approve", """{ "by": "first open" }"""));
        Assert.Equal([3], Started(zero));
        Assert.Equal([ItemOutcome.Succeeded, ItemOutcome.Succeeded, ItemOutcome.Open, ItemOutcome.Succeeded], Outcomes(zero));

        var last = driver.Send(driver.Signal("approve#2", """{ "by": "two" }"""));
        AssertJson("""
            [ { "line": "a", "index": 0, "by": "first open" }, { "line": "b", "index": 1, "by": "one" },
              { "line": "c", "index": 2, "by": "two" }, { "line": "d", "index": 3, "by": "early" } ]
            """, JsonNode.Parse(last.Instance.OutputJson!));
    }

    [Fact]
    public void A_forEach_over_no_items_continues_at_once_with_an_empty_output()
    {
        var commit = For(Approvals()).Start("""{ "lines": [] }""");

        Assert.Equal(InstanceStatus.Completed, commit.Instance.Status);
        Assert.Equal("[]", commit.Instance.OutputJson);
    }

    [Fact]
    public void AtLeast_ends_the_step_when_enough_items_succeeded_and_closes_the_open_ones()
    {
        var driver = For("""
            { "name": "quotes", "steps": [
              { "id": "ask", "type": "forEach", "items": "[1, 2, 3]", "completion": { "atLeast": 2 }, "output": "quotes",
                "steps": [ { "id": "quote", "type": "humanTask", "title": "'Quote ' + item", "output": "q" } ] },
              { "id": "done", "type": "complete", "result": "vars.quotes" } ] }
            """);
        var start = driver.Start();
        var tasks = start.NewTasks.Select(t => t.Id).ToArray();
        Assert.Equal(3, tasks.Length);

        driver.Send(driver.TaskCompletion(tasks[2], """{ "price": 30 }"""));
        var done = driver.Send(driver.TaskCompletion(tasks[0], """{ "price": 10 }"""));

        Assert.Equal(InstanceStatus.Completed, done.Instance.Status);
        AssertJson("""[ { "price": 10 }, null, { "price": 30 } ]""", JsonNode.Parse(done.Instance.OutputJson!));
        Assert.Equal([tasks[1]], done.ClosedTasks);
        AssertJson("""{ "succeeded": 2, "failed": 0, "cancelled": 1 }""", EventData(done, "ForEachEnded"));
    }

    [Theory]
    [InlineData("{ \"firstSuccess\": true }", 1)]
    [InlineData("{ \"fraction\": 0.5 }", 2)]
    [InlineData("{ \"atLeast\": 3 }", 3)]
    [InlineData("null", 4)]
    public void Each_completion_rule_needs_its_number_of_successes(string completion, int needed)
    {
        var driver = For(Approvals($"\"completion\": {completion},"));
        driver.Start("""{ "lines": ["a", "b", "c", "d"] }""");

        for (var i = 0; i < needed - 1; i++)
        {
            Assert.Equal(InstanceStatus.Waiting, driver.Send(driver.Signal($"approve#{i}", "{}")).Instance.Status);
        }

        Assert.Equal(InstanceStatus.Completed, driver.Send(driver.Signal($"approve#{needed - 1}", "{}")).Instance.Status);
    }

    private const string Checks = """
        { "name": "checks", "steps": [
          { "id": "check", "type": "forEach", "items": "input.values", "toleratedFailures": 1, "output": "ok",
            "steps": [
              { "id": "test", "type": "decision", "branches": [ { "when": "item < 0", "next": "bad" } ], "otherwise": "good" },
              { "id": "bad", "type": "fail", "reason": "'negative: ' + item" },
              { "id": "good", "type": "assign", "set": { "last": "item" } } ],
            "result": "item * 2" },
          { "id": "done", "type": "complete", "result": "vars.ok" } ] }
        """;

    [Fact]
    public void A_fail_step_fails_only_its_item_while_the_failures_are_tolerated()
    {
        var commit = For(Checks).Start("""{ "values": [1, -2, 3] }""");

        Assert.Equal(InstanceStatus.Completed, commit.Instance.Status);
        AssertJson("[2, null, 6]", JsonNode.Parse(commit.Instance.OutputJson!));
        Assert.Contains(commit.History, h => h.Type == "ItemEnded" && h.DataJson!.Contains("negative: -2", StringComparison.Ordinal));
    }

    [Fact]
    public void More_failures_than_tolerated_fail_the_instance_with_the_counts()
    {
        var commit = For(Checks).Start("""{ "values": [1, -2, -3] }""");

        Assert.Equal(InstanceStatus.Failed, commit.Instance.Status);
        Assert.Equal("forEach 'check': 2 of 3 items failed, 1 tolerated", commit.Instance.Error);
    }

    [Fact]
    public void Items_over_the_configured_limit_fail_the_run_naming_the_setting()
    {
        var driver = For(Approvals(), new EngineOptions { MaxForEachItems = 2 }, TimeProvider.System);

        var run = driver.Executor.Start(driver.Definition, driver.NewInstance("""{ "lines": [1, 2, 3] }"""), driver.Instant);

        Assert.False(run.Succeeded);
        Assert.Equal("step 'lines': items gave 3 items; a forEach takes at most 2 (Engine:MaxForEachItems)", run.Error);
    }

    [Fact]
    public void Items_that_are_not_an_array_fail_the_run_saying_what_they_were()
    {
        var driver = For(Approvals());

        var run = driver.Executor.Start(driver.Definition, driver.NewInstance("""{ "lines": { "a": 1 } }"""), driver.Instant);

        Assert.Equal("step 'lines': items must give an array; 'input.lines' gave an object", run.Error);
    }

    [Fact]
    public void Cancelling_closes_the_tasks_of_every_open_item()
    {
        var driver = For("""
            { "name": "review", "steps": [
              { "id": "each", "type": "forEach", "items": "[1, 2]", "steps": [ { "id": "review", "type": "humanTask", "title": "'Review'" } ] },
              { "id": "done", "type": "complete" } ] }
            """);
        var tasks = driver.Start().NewTasks.Select(t => t.Id).ToArray();

        var cancel = WorkflowExecutor.Cancel(driver.Instance, "no longer needed", driver.Instant);

        Assert.Equal(tasks, cancel.ClosedTasks);
        Assert.True(cancel.CloseOpenWork);
    }

    [Fact]
    public void A_child_per_item_succeeds_with_the_childs_output_and_fails_when_the_child_did_not_complete()
    {
        var driver = For("""
            { "name": "batch", "steps": [
              { "id": "each", "type": "forEach", "items": "[10, 20]", "definition": "invoice", "toleratedFailures": 1, "output": "invoices" },
              { "id": "done", "type": "complete", "result": "vars.invoices" } ] }
            """);
        var start = driver.Start();
        var starts = start.NewSignals.Where(s => s.Name == SignalMessage.SubWorkflowSignal).ToArray();
        Assert.Equal(2, starts.Length);
        Assert.Contains("\"inputJson\":\"10\"", starts[0].PayloadJson, StringComparison.Ordinal);

        driver.Send(ChildEnded(driver, starts[1].Id, """{ "status": "Failed", "error": "no customer" }"""));
        var done = driver.Send(ChildEnded(driver, starts[0].Id, """{ "status": "Completed", "output": { "total": 10 } }"""));

        Assert.Equal(InstanceStatus.Completed, done.Instance.Status);
        AssertJson("""[ { "total": 10 }, null ]""", JsonNode.Parse(done.Instance.OutputJson!));
    }

    private static SignalMessage ChildEnded(InstanceDriver driver, Guid childStart, string payload)
    {
        var signal = driver.Signal(SignalMessage.ChildEndedSignal, payload);
        signal.SubjectId = childStart;
        return signal;
    }
}
