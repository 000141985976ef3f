using System.Net;
using System.Net.Http.Json;
using System.Text;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

public abstract class InstanceApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Api:MaxRequestBodyBytes"] = "4096" };

    [Fact]
    public async Task Start_signal_wait_and_query_a_signal_roundtrip()
    {
        await Api.PublishExampleAsync("signal-roundtrip.json");
        var started = await Api.StartAsync("signal-roundtrip", new { customer = 7 });
        Assert.Equal(InstanceStatus.Waiting, started.Status);
        Assert.Equal("wait-go", started.Wait!.StepId);

        await Api.SignalAsync(started.Id, "go", new { value = 42 });
        var done = await Api.WaitForAsync(started.Id, InstanceStatus.Completed);

        Assert.Equal(42, done.Output!.Value.GetProperty("result").GetProperty("value").GetInt32());
        var history = await Api.HistoryAsync(started.Id);
        Assert.Equal(
            ["InstanceStarted", "WaitStarted", "SignalReceived", "StepCompleted", "InstanceCompleted"],
            history.Select(h => h.Type));
        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(h => h.Sequence));
    }

    [Fact]
    public async Task A_wait_after_a_revision_returns_once_the_instance_commits_a_later_one()
    {
        var name = Definitions.Unique("after");
        await Api.PublishAsync(Definitions.TwoWaits(name));
        var started = await Api.StartAsync(name);
        var ct = TestContext.Current.CancellationToken;

        // Waiting at "wait-a", an instance that did not change: the wait ends at its timeout with the same version.
        var unchanged = await Api.Http.GetFromJsonAsync<InstanceView>($"/instances/{started.Id}?afterRevision={started.Revision}&timeout=0", WorkflowServiceFactory.Json, ct);
        Assert.Equal(started.Revision, unchanged!.Revision);

        // Held while the signal is applied: it answers with the instance waiting at the next step, still Waiting.
        var waiting = Api.Http.GetFromJsonAsync<InstanceView>($"/instances/{started.Id}?afterRevision={started.Revision}&timeout=30", WorkflowServiceFactory.Json, ct);
        await Api.SignalAsync(started.Id, "a", new { value = 1 });
        var changed = await waiting;

        Assert.True(changed!.Revision > started.Revision, $"revision {changed.Revision} after {started.Revision}");
        Assert.Equal(InstanceStatus.Waiting, changed.Status);
        Assert.Equal("wait-b", changed.Wait!.StepId);
        // A revision already passed answers at once.
        var earlier = await Api.Http.GetFromJsonAsync<InstanceView>($"/instances/{started.Id}?afterRevision=0&timeout=30", WorkflowServiceFactory.Json, ct);
        Assert.Equal(changed.Revision, earlier!.Revision);
    }

    [Fact]
    public async Task A_repeated_idempotency_key_returns_the_same_instance()
    {
        var name = Definitions.Unique("idem");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var first = await Api.StartAsync(name, idempotencyKey: "order-1-" + name);
        var again = await Api.StartAsync(name, idempotencyKey: "order-1-" + name, expected: HttpStatusCode.OK);

        Assert.Equal(first.Id, again.Id);
        var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}", WorkflowServiceFactory.Json);
        Assert.Equal(1, page!.Total);
    }

    [Fact]
    public async Task Concurrent_starts_with_one_business_key_make_one_instance()
    {
        var name = Definitions.Unique("bk");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));

        var starts = await Task.WhenAll(Enumerable.Range(0, 8).Select(async _ =>
        {
            using var response = await Api.Http.PostAsJsonAsync("/instances", new { definition = name, businessKey = "policy-77" });
            Assert.True(response.StatusCode is HttpStatusCode.Created or HttpStatusCode.OK, response.StatusCode.ToString());
            return (await response.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!.Id;
        }));

        Assert.Single(starts.Distinct());
        var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}&businessKey=policy-77", WorkflowServiceFactory.Json);
        Assert.Equal(1, page!.Total);
    }

    [Fact]
    public async Task A_repeated_signal_idempotency_key_returns_the_first_signal()
    {
        var name = Definitions.Unique("sigidem");
        await Api.PublishAsync(Definitions.TwoWaits(name));
        var instance = await Api.StartAsync(name);

        var first = await Api.SignalAsync(instance.Id, "b", new { n = 1 }, idempotencyKey: "cb-1");
        var again = await Api.SignalAsync(instance.Id, "b", new { n = 2 }, idempotencyKey: "cb-1", expected: HttpStatusCode.OK);

        Assert.Equal(first.Id, again.Id);
        Assert.Single(await Api.SignalsAsync(instance.Id));
    }

    [Fact]
    public async Task Instances_are_listed_by_definition_status_and_creation_time_with_paging()
    {
        var name = Definitions.Unique("list");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var from = DateTimeOffset.UtcNow.AddMinutes(-1);
        var ids = new List<Guid>();
        for (var i = 0; i < 3; i++)
        {
            ids.Add((await Api.StartAsync(name)).Id);
        }

        await Api.SignalAsync(ids[0], "go", new { value = 1 });
        await Api.WaitForAsync(ids[0], InstanceStatus.Completed);

        var waiting = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>(
            $"/instances?definition={name}&status=Waiting&createdFrom={Uri.EscapeDataString(from.ToString("O"))}&limit=1", WorkflowServiceFactory.Json);
        Assert.Equal(2, waiting!.Total);
        Assert.Single(waiting.Items);
        var second = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>(
            $"/instances?definition={name}&status=Waiting&limit=1&offset=1", WorkflowServiceFactory.Json);
        Assert.NotEqual(waiting.Items[0].Id, second!.Items[0].Id);
        var none = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>(
            $"/instances?definition={name}&createdTo={Uri.EscapeDataString(from.ToString("O"))}", WorkflowServiceFactory.Json);
        Assert.Equal(0, none!.Total);
    }

    [Fact]
    public async Task Paging_with_after_while_suspending_what_is_listed_skips_nothing()
    {
        // Found by the fault table's mass-operations row: an operator suspending every waiting instance page by page
        // with offset skipped about half of them, because each suspended instance left the list and the next offset
        // jumped over as many. The cursor (next, passed as after) names a place in the order, not a count.
        var name = Definitions.Unique("keyset");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = new HashSet<Guid>();
        for (var i = 0; i < 23; i++)
        {
            started.Add((await Api.StartAsync(name)).Id);
        }

        var seen = new List<Guid>();
        string? after = null;
        var pages = 0;
        do
        {
            var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>(
                $"/instances?definition={name}&status=Waiting&limit=5{(after is null ? "" : $"&after={after}")}", WorkflowServiceFactory.Json);
            foreach (var item in page!.Items)
            {
                seen.Add(item.Id);
                using var suspended = await Api.Http.PostAsJsonAsync($"/instances/{item.Id}/suspend", new { reason = "mass" });
                Assert.Equal(HttpStatusCode.OK, suspended.StatusCode);
            }

            after = page.Next;
            pages++;
        }
        while (after is not null && pages < 20);

        Assert.Equal(started.Order(), seen.Order());
        Assert.Equal(seen.Count, seen.Distinct().Count());
        // Newest first, the same order as offset paging.
        var all = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}&limit=50", WorkflowServiceFactory.Json);
        Assert.Equal(all!.Items.Select(i => i.Id), seen);
        Assert.Null(all.Next);

        // A cursor is the service's own: anything else, or one with an offset, is refused with the field named.
        foreach (var bad in new[] { "not-a-cursor", "MTIzOng", Uri.EscapeDataString("a b") })
        {
            using var refused = await Api.Http.GetAsync($"/instances?definition={name}&after={bad}");
            var problem = await ApiClient.ProblemAsync(refused, HttpStatusCode.BadRequest);
            Assert.Contains("after", problem["errors"]!.AsObject().Select(e => e.Key));
        }

        using var both = await Api.Http.GetAsync($"/instances?definition={name}&offset=5&after={all.Items[0].Id:N}");
        Assert.Contains("cannot be combined", (await ApiClient.ProblemAsync(both, HttpStatusCode.BadRequest)).ToJsonString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Unknown_definition_and_unknown_instance_are_not_found()
    {
        using var start = await Api.Http.PostAsJsonAsync("/instances", new { definition = "never-published" });
        await ApiClient.ProblemAsync(start, HttpStatusCode.NotFound);
        var id = Guid.NewGuid();
        using var get = await Api.Http.GetAsync($"/instances/{id}");
        await ApiClient.ProblemAsync(get, HttpStatusCode.NotFound);
        using var signal = await Api.Http.PostAsJsonAsync($"/instances/{id}/signals", new { name = "go" });
        await ApiClient.ProblemAsync(signal, HttpStatusCode.NotFound);
        using var cancel = await Api.Http.PostAsJsonAsync($"/instances/{id}/cancel", new { reason = "x" });
        await ApiClient.ProblemAsync(cancel, HttpStatusCode.NotFound);
        using var history = await Api.Http.GetAsync($"/instances/{id}/history");
        await ApiClient.ProblemAsync(history, HttpStatusCode.NotFound);
    }

    [Fact]
    public async Task A_signal_to_a_completed_or_cancelled_instance_is_a_conflict_and_is_not_stored()
    {
        var name = Definitions.Unique("ended");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var completed = await Api.StartAsync(name);
        await Api.SignalAsync(completed.Id, "go", new { value = 1 });
        await Api.WaitForAsync(completed.Id, InstanceStatus.Completed);
        var cancelled = await Api.StartAsync(name);
        using (var cancel = await Api.Http.PostAsJsonAsync($"/instances/{cancelled.Id}/cancel", new { reason = "customer withdrew" }))
        {
            Assert.Equal(HttpStatusCode.OK, cancel.StatusCode);
        }

        foreach (var id in new[] { completed.Id, cancelled.Id })
        {
            var before = (await Api.SignalsAsync(id)).Count;
            using var response = await Api.Http.PostAsJsonAsync($"/instances/{id}/signals", new { name = "go" });
            await ApiClient.ProblemAsync(response, HttpStatusCode.Conflict);
            Assert.Equal(before, (await Api.SignalsAsync(id)).Count);
        }

        using var again = await Api.Http.PostAsJsonAsync($"/instances/{cancelled.Id}/cancel", new { reason = "twice" });
        await ApiClient.ProblemAsync(again, HttpStatusCode.Conflict);
    }

    [Fact]
    public async Task A_body_over_the_size_limit_is_refused_with_413_and_nothing_is_started()
    {
        var name = Definitions.Unique("big");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var body = $$"""{ "definition": "{{name}}", "input": { "blob": "{{new string('x', 10_000)}}" } }""";
        using var response = await Api.Http.PostAsync("/instances", new StringContent(body, Encoding.UTF8, "application/json"));

        await ApiClient.ProblemAsync(response, HttpStatusCode.RequestEntityTooLarge);
        var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}", WorkflowServiceFactory.Json);
        Assert.Equal(0, page!.Total);
    }

    [Fact]
    public async Task Malformed_json_and_invalid_fields_are_bad_requests()
    {
        using var malformed = await Api.Http.PostAsync("/instances", new StringContent("{ definition: ", Encoding.UTF8, "application/json"));
        await ApiClient.ProblemAsync(malformed, HttpStatusCode.BadRequest);
        var name = Definitions.Unique("bad");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);
        using var reserved = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/signals", new { name = "$timer" });
        await ApiClient.ProblemAsync(reserved, HttpStatusCode.BadRequest);
        using var waitFor = await Api.Http.GetAsync($"/instances/{instance.Id}?waitFor=Sleeping&timeout=1");
        await ApiClient.ProblemAsync(waitFor, HttpStatusCode.BadRequest);
        Assert.Empty(await Api.SignalsAsync(instance.Id));
    }

    [Fact]
    public async Task Errors_never_carry_stack_traces_or_sql()
    {
        using var response = await Api.Http.PostAsync("/instances", new StringContent("[1,2", Encoding.UTF8, "application/json"));
        var body = await response.Content.ReadAsStringAsync();

        Assert.DoesNotContain("   at ", body, StringComparison.Ordinal);
        Assert.DoesNotContain("SELECT", body, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("Data Source", body, StringComparison.Ordinal);
    }
}

public sealed class SqliteInstanceApiTests : InstanceApiTests<SqliteBackend>;

public sealed class PostgresInstanceApiTests : InstanceApiTests<PostgresBackend>;

public sealed class MongoDbInstanceApiTests : InstanceApiTests<MongoDbBackend>;
