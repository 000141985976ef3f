using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.ForEach;

/// <summary>forEach steps through the real HTTP pipeline, real signal workers and a real store.</summary>
public abstract class ForEachTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Engine:RetryBackoff"] = "00:00:00.010", ["Engine:MaxAttempts"] = "2" };

    /// <summary>A forEach over input.items whose body waits for 'done' per item; its fields are spliced in.</summary>
    private static string Waiting(string name, string fields = "") => $$"""
        { "name": "{{name}}", "steps": [
          { "id": "each", "type": "forEach", "items": "input.items", {{fields}}
            "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "done" } ],
            "result": "({ item: item, by: signal.by })", "output": "results" },
          { "id": "end", "type": "complete", "result": "vars.results" } ] }
        """;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private async Task<InstanceView> StartAsync(string definition, params object[] items)
    {
        var name = Definitions.Unique("foreach");
        await Api.PublishAsync(definition.Replace("{{name}}", name, StringComparison.Ordinal));
        return await Api.StartAsync(name, new { items });
    }

    /// <summary>The instance's open tasks, once there are <paramref name="count"/> of them.</summary>
    private async Task<IReadOnlyList<TaskView>> OpenTasksAsync(Guid instanceId, int count)
    {
        IReadOnlyList<TaskView> tasks = [];
        await Eventually.WaitUntilAsync(async () =>
            (tasks = await Api.EveryPageAsync<TaskView>($"/tasks?instanceId={instanceId}&status=Open")).Count == count, what: $"{count} open tasks");
        return tasks;
    }

    /// <summary>The item indexes of the history events of <paramref name="type"/>, in history order.</summary>
    private static List<int> Indexes(IReadOnlyList<HistoryEventView> history, string type, string? outcome = null) =>
        history.Where(h => h.Type == type && (outcome is null || h.Data!.Value.GetProperty("outcome").GetString() == outcome))
            .Select(h => h.Data!.Value.GetProperty("index").GetInt32()).ToList();

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(500)]
    public async Task A_forEach_over_0_1_and_500_items_runs_each_once_and_collects_the_results_in_item_order(int count)
    {
        var instance = await StartAsync("""
            { "name": "{{name}}", "steps": [
              { "id": "each", "type": "forEach", "items": "input.items",
                "steps": [ { "id": "double", "type": "assign", "set": { "last": "item * 2" } } ],
                "result": "item * 2", "output": "doubled" },
              { "id": "end", "type": "complete", "result": "vars.doubled" } ] }
            """, [.. Enumerable.Range(0, count).Cast<object>()]);

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(Enumerable.Range(0, count).Select(i => i * 2), done.Output!.Value.EnumerateArray().Select(e => e.GetInt32()));
        var history = await Api.HistoryAsync(instance.Id);
        Assert.Equal(Enumerable.Range(0, count), Indexes(history, "ItemStarted"));
        Assert.Equal(Enumerable.Range(0, count), Indexes(history, "ItemEnded", "succeeded"));
    }

    [Fact]
    public async Task A_parallel_forEach_with_maxConcurrency_3_never_has_more_than_3_items_open()
    {
        var instance = await StartAsync(Waiting("{{name}}", "\"maxConcurrency\": 3,"), [.. Enumerable.Range(0, 10).Cast<object>()]);
        Assert.Equal("0 of 10 done", instance.Wait!.Items!.Summary);
        Assert.Equal(3, instance.Wait.Items.Open);

        // Signals to items not started yet are parked and taken when their item starts; last first.
        foreach (var i in Enumerable.Range(0, 10).Reverse())
        {
            await Api.SignalAsync(instance.Id, $"done#{i}", new { by = $"s{i}" });
        }

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(Enumerable.Range(0, 10).Select(i => $"s{i}"), done.Output!.Value.EnumerateArray().Select(e => e.GetProperty("by").GetString()));
        var open = 0;
        var most = 0;
        foreach (var h in await Api.HistoryAsync(instance.Id))
        {
            open += h.Type == "ItemStarted" ? 1 : h.Type == "ItemEnded" ? -1 : 0;
            most = Math.Max(most, open);
        }

        Assert.Equal(3, most);
    }

    [Fact]
    public async Task A_sequential_forEach_starts_each_item_after_the_one_before_ended_and_shows_its_progress()
    {
        var instance = await StartAsync(Waiting("{{name}}", "\"mode\": \"sequential\","), "a", "b", "c");

        await Api.SignalAsync(instance.Id, "done", new { by = "first" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Items!.Done == 1);
        var halfway = await Api.GetAsync(instance.Id);
        Assert.Equal("1 of 3 done", halfway.Wait!.Items!.Summary);
        Assert.Equal([ItemOutcome.Succeeded, ItemOutcome.Open, ItemOutcome.Pending], halfway.Wait.Branches!.Select(b => b.Outcome));
        Assert.Equal("wait", halfway.Wait.Branches![1].StepId);
        await Api.SignalAsync(instance.Id, "done", new { by = "second" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Items!.Done == 2);
        await Api.SignalAsync(instance.Id, "done", new { by = "third" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(["first", "second", "third"], done.Output!.Value.EnumerateArray().Select(e => e.GetProperty("by").GetString()));
        var order = (await Api.HistoryAsync(instance.Id)).Where(h => h.Type is "ItemStarted" or "ItemEnded")
            .Select(h => $"{h.Type}:{h.Data!.Value.GetProperty("index").GetInt32()}");
        Assert.Equal(["ItemStarted:0", "ItemEnded:0", "ItemStarted:1", "ItemEnded:1", "ItemStarted:2", "ItemEnded:2"], order);
    }

    [Theory]
    [InlineData("{ \"firstSuccess\": true }", new[] { 2 })]
    [InlineData("{ \"atLeast\": 2 }", new[] { 3, 0 })]
    [InlineData("{ \"fraction\": 0.75 }", new[] { 1, 3, 2 })]
    public async Task Each_completion_rule_continues_once_enough_items_succeeded_and_cancels_the_rest(string completion, int[] signalled)
    {
        var instance = await StartAsync(Waiting("{{name}}", $"\"completion\": {completion},"), 0, 1, 2, 3);

        foreach (var i in signalled)
        {
            await Api.SignalAsync(instance.Id, $"done#{i}", new { by = "x" });
        }

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        var results = done.Output!.Value.EnumerateArray().ToList();
        Assert.Equal(Enumerable.Range(0, 4).Where(signalled.Contains), Enumerable.Range(0, 4).Where(i => results[i].ValueKind != JsonValueKind.Null));
        var history = await Api.HistoryAsync(instance.Id);
        Assert.Equal(Enumerable.Range(0, 4).Where(i => !signalled.Contains(i)), Indexes(history, "ItemEnded", "cancelled").Order());
        Assert.All(await Api.SignalsAsync(instance.Id), s => Assert.Equal(SignalStatus.Handled, s.Status));
    }

    private const string Checks = """
        { "name": "{{name}}", "steps": [
          { "id": "each", "type": "forEach", "items": "input.items", "toleratedFailures": 1, "output": "ok", "result": "item",
            "steps": [
              { "id": "test", "type": "decision", "branches": [ { "when": "item < 0", "next": "bad" } ], "otherwise": "good" },
              { "id": "bad", "type": "fail", "reason": "'negative: ' + item" },
              { "id": "good", "type": "assign", "set": { "seen": "item" } } ] },
          { "id": "end", "type": "complete", "result": "vars.ok" } ] }
        """;

    [Fact]
    public async Task Failed_items_within_toleratedFailures_leave_a_null_result_and_the_instance_goes_on()
    {
        var instance = await StartAsync(Checks, 1, -2, 3);

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("[1,null,3]", done.Output!.Value.GetRawText());
        var failed = Assert.Single(await Api.HistoryAsync(instance.Id), h => h.Type == "ItemEnded" && h.Data!.Value.GetProperty("outcome").GetString() == "failed");
        Assert.Equal("negative: -2", failed.Data!.Value.GetProperty("error").GetString());
    }

    [Fact]
    public async Task More_failed_items_than_tolerated_fail_the_instance_saying_how_many()
    {
        var instance = await StartAsync(Checks, -1, 2, -3);

        var failed = await Api.WaitForAsync(instance.Id, InstanceStatus.Failed);

        Assert.Equal("forEach 'each': 2 of 3 items failed, 1 tolerated", failed.Error);
    }

    [Fact]
    public async Task One_item_waits_for_a_signal_and_another_for_a_human_task_and_each_is_resumed_by_its_own()
    {
        var instance = await StartAsync("""
            { "name": "{{name}}", "steps": [
              { "id": "each", "type": "forEach", "items": "input.items", "output": "answers",
                "steps": [
                  { "id": "how", "type": "decision", "branches": [ { "when": "item === 'task'", "next": "ask" } ], "otherwise": "wait" },
                  { "id": "ask", "type": "humanTask", "title": "'Item ' + itemIndex", "next": "after-ask" },
                  { "id": "wait", "type": "waitForSignal", "signal": "answer" },
                  { "id": "after-ask", "type": "assign", "set": { "last": "itemIndex" } } ] },
              { "id": "end", "type": "complete", "result": "vars.answers" } ] }
            """, "signal", "task");
        var task = Assert.Single(await OpenTasksAsync(instance.Id, 1));
        Assert.Equal("ask", task.StepId);

        using (var complete = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { result = new { ok = true } }, Token))
        {
            Assert.Equal(HttpStatusCode.OK, complete.StatusCode);
        }

        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Items!.Done == 1);
        await Api.SignalAsync(instance.Id, "answer#0", new { said = "yes" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("""[{"said":"yes"},{"ok":true}]""", done.Output!.Value.GetRawText());
    }

    [Fact]
    public async Task Cancelling_mid_way_ends_the_instance_and_closes_the_tasks_of_its_open_items()
    {
        var instance = await StartAsync("""
            { "name": "{{name}}", "steps": [
              { "id": "each", "type": "forEach", "items": "input.items", "maxConcurrency": 2,
                "steps": [ { "id": "review", "type": "humanTask", "title": "'Review ' + item" } ] },
              { "id": "end", "type": "complete" } ] }
            """, "a", "b", "c");
        var open = await OpenTasksAsync(instance.Id, 2);

        using (var cancel = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/cancel", new { reason = "order withdrawn" }, Token))
        {
            Assert.Equal(HttpStatusCode.OK, cancel.StatusCode);
        }

        await Api.WaitForAsync(instance.Id, InstanceStatus.Cancelled);
        Assert.Empty(await Api.EveryPageAsync<TaskView>($"/tasks?instanceId={instance.Id}&status=Open"));
        Assert.Equal(2, open.Count);
    }

    [Fact]
    public async Task A_suspended_forEach_keeps_its_items_signals_until_it_is_resumed()
    {
        var instance = await StartAsync(Waiting("{{name}}"), "a", "b");
        using (var suspend = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/suspend", new { reason = "audit" }, Token))
        {
            Assert.Equal(HttpStatusCode.OK, suspend.StatusCode);
        }

        await Api.SignalAsync(instance.Id, "done#1", new { by = "during" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 1);
        var held = await Api.GetAsync(instance.Id);
        Assert.Equal(InstanceStatus.Suspended, held.Status);
        Assert.Equal("0 of 2 done", held.Wait!.Items!.Summary);

        using (var resume = await Api.Http.PostAsync($"/instances/{instance.Id}/resume", null, Token))
        {
            Assert.Equal(HttpStatusCode.OK, resume.StatusCode);
        }

        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait?.Items?.Done == 1);
        await Api.SignalAsync(instance.Id, "done#0", new { by = "after" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(["after", "during"], done.Output!.Value.EnumerateArray().Select(e => e.GetProperty("by").GetString()));
    }

    [Fact]
    public async Task The_published_canonical_form_round_trips_and_a_signal_index_must_be_a_number()
    {
        var name = Definitions.Unique("foreach-canon");
        var published = await Api.PublishAsync(Waiting(name, "\"maxConcurrency\": 2, \"completion\": { \"atLeast\": 1 }, \"toleratedFailures\": 1,"));
        var canonical = published.Definition.GetRawText();

        var again = await Api.PublishAsync(canonical);

        Assert.Equal(canonical, again.Definition.GetRawText());
        Assert.Contains("\"type\":\"forEach\"", canonical, StringComparison.Ordinal);
        var instance = await Api.StartAsync(name, new { items = new List<int> { 1 } });
        using var response = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/signals", new { name = "done#first" }, Token);
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        Assert.Contains("a forEach item", problem.ToJsonString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_instance_inside_a_forEach_is_not_migrated_and_the_refusal_says_why()
    {
        var name = Definitions.Unique("foreach-migrate");
        await Api.PublishAsync(Waiting(name));
        var instance = await Api.StartAsync(name, new { items = new List<int> { 1, 2 } });
        await Api.PublishAsync(Waiting(name, "\"mode\": \"sequential\","));

        using var response = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/migrate", new { toVersion = 2, dryRun = true }, Token);

        var body = await response.Content.ReadAsStringAsync(Token);
        Assert.Contains("it is inside the forEach step 'each': an instance does not move to another version while its items run", body, StringComparison.Ordinal);
        Assert.Equal(1, (await Api.GetAsync(instance.Id)).Version);
    }
}

public sealed class SqliteForEachTests : ForEachTests<SqliteBackend>;

public sealed class PostgresForEachTests : ForEachTests<PostgresBackend>;

public sealed class MongoDbForEachTests : ForEachTests<MongoDbBackend>;
