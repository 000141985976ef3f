using WorkflowService.Engine.Persistence;

namespace WorkflowService.UnitTests.Execution;

/// <summary>
/// Which search attributes a commit evaluates: all at the instance's first run; later, those whose value may have
/// changed (what reads the variables when the run changed them, what reads anything but input and variables).
/// </summary>
public sealed class SearchAttributeRunTests
{
    private const string Definition = """
        {
          "name": "claim",
          "searchAttributes": {
            "region": { "type": "keyword", "value": "input.region" },
            "kind": { "type": "keyword", "value": "'claim'" },
            "amount": { "type": "number", "value": "vars.amount ?? null" },
            "version": { "type": "number", "value": "instance.version" }
          },
          "steps": [
            { "id": "wait-update", "type": "waitForSignal", "signal": "update", "output": "update" },
            { "id": "apply", "type": "assign", "set": { "amount": "vars.update.amount" } },
            { "id": "wait-note", "type": "waitForSignal", "signal": "note" },
            { "id": "wait-done", "type": "waitForSignal", "signal": "done" },
            { "id": "end", "type": "complete" }
          ]
        }
        """;

    private static Dictionary<string, object?> Values(WaitPointCommit commit) =>
        (commit.Instance.SearchAttributes ?? []).ToDictionary(v => v.Name, v => v.Value);

    [Fact]
    public void The_first_run_evaluates_every_attribute()
    {
        var driver = InstanceDriver.For(Definition);

        var start = driver.Start("""{ "region": "EU" }""");

        Assert.Equal(["region", "kind", "amount", "version"], start.Instance.SearchAttributes!.Select(v => v.Name));
        Assert.Equal("EU", Values(start)["region"]);
        Assert.Equal("claim", Values(start)["kind"]);
        Assert.Null(Values(start)["amount"]);
    }

    [Fact]
    public void A_run_that_changes_the_variables_evaluates_what_reads_them_and_never_what_reads_only_the_input()
    {
        var driver = InstanceDriver.For(Definition);
        driver.Start("""{ "region": "EU" }""");

        var update = driver.Send(driver.Signal("update", """{ "amount": 800 }"""));

        Assert.Equal(["amount", "version"], update.Instance.SearchAttributes!.Select(v => v.Name));
        Assert.Equal(800m, Values(update)["amount"]);
    }

    [Fact]
    public void A_run_that_leaves_the_variables_evaluates_only_what_reads_anything_else()
    {
        var driver = InstanceDriver.For(Definition);
        driver.Start("""{ "region": "EU" }""");
        driver.Send(driver.Signal("update", """{ "amount": 800 }"""));

        var note = driver.Send(driver.Signal("note"));

        Assert.Equal(["version"], note.Instance.SearchAttributes!.Select(v => v.Name));
    }

    [Fact]
    public void A_run_that_changes_nothing_they_read_evaluates_none()
    {
        var driver = InstanceDriver.For(Definition.Replace(
            "\"version\": { \"type\": \"number\", \"value\": \"instance.version\" }", "\"settled\": { \"type\": \"bool\", \"value\": \"true\" }",
            StringComparison.Ordinal));
        driver.Start("""{ "region": "EU" }""");
        driver.Send(driver.Signal("update", """{ "amount": 800 }"""));

        var note = driver.Send(driver.Signal("note"));

        Assert.Null(note.Instance.SearchAttributes);
    }

    [Fact]
    public void A_cancel_path_run_after_a_failed_start_is_the_first_run_and_evaluates_every_attribute()
    {
        var driver = InstanceDriver.For(Definition.Replace("\"name\": \"claim\",", "\"name\": \"claim\", \"onCancel\": \"undo\",", StringComparison.Ordinal)
            .Replace("{ \"id\": \"end\", \"type\": \"complete\" }",
                "{ \"id\": \"end\", \"type\": \"complete\" }, { \"id\": \"undo\", \"type\": \"complete\" }", StringComparison.Ordinal));
        driver.StoreUnstarted("the start failed", """{ "region": "EU" }""");

        var cancelled = InstanceDriver.Succeeded(driver.Executor.CancelWithPath(driver.Definition, driver.Instance, "withdrawn", driver.Instant));

        Assert.Equal(InstanceStatus.Cancelled, cancelled.Instance.Status);
        Assert.Equal("EU", Values(cancelled)["region"]);
        Assert.Equal("claim", Values(cancelled)["kind"]);
    }

    [Fact]
    public void Attributes_have_a_budget_of_their_own_for_what_needs_the_engine()
    {
        // A budget of one tick: the run (no expression before its wait) reaches its wait, and the attribute that needs
        // the engine, with one tick of its own, runs out of it: it is left empty, and the run commits all the same.
        // Paths into the input and variables are read from their JSON, with no script to bound.
        var driver = InstanceDriver.For(Definition, new WorkflowService.Engine.Execution.EngineOptions { MaxRunTime = TimeSpan.FromTicks(1) },
            new Microsoft.Extensions.Time.Testing.FakeTimeProvider(InstanceDriver.StartTime));

        var start = driver.Start("""{ "region": "EU" }""");

        Assert.Equal(InstanceStatus.Waiting, start.Instance.Status);
        Assert.Null(Values(start)["version"]);
        Assert.Equal("EU", Values(start)["region"]);
        Assert.Equal("claim", Values(start)["kind"]);
    }

    [Fact]
    public void Attributes_do_not_see_what_a_step_did_to_the_input_or_a_built_in()
    {
        var driver = InstanceDriver.For("""
            {
              "name": "claim",
              "searchAttributes": {
                "region": { "type": "keyword", "value": "input.region" },
                "top": { "type": "number", "value": "Math.max(1, 2)" },
                "seen": { "type": "keyword", "value": "vars.seen" }
              },
              "steps": [
                { "id": "meddle", "type": "assign", "set": { "seen": "(input.region = 'XX', Math.max = () => 0, input.region)" } },
                { "id": "wait", "type": "waitForSignal", "signal": "done" },
                { "id": "end", "type": "complete" }
              ]
            }
            """);

        var start = driver.Start("""{ "region": "EU" }""");

        Assert.Equal("EU", Values(start)["region"]);
        Assert.Equal(2m, Values(start)["top"]);
        // What the step stored in the variables is what they hold.
        Assert.Equal("XX", Values(start)["seen"]);
    }
}
