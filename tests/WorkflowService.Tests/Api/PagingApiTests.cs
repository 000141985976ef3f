using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

/// <summary>
/// The lists that used to answer whole and now page by cursor, as the instance list does: an instance's history, its
/// signals, and a definition's versions. Each is read page by page through the pipeline and compared with one page that
/// holds it all.
/// </summary>
public abstract class PagingApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private const int TickCount = 6;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Paging_through_a_history_of_many_stored_batches_returns_every_event_once_in_order_at_any_page_size()
    {
        var id = await CompletedTicksAsync();
        var whole = Assert.Single(await Api.PagesAsync<HistoryEventView>($"/instances/{id}/history?limit=500"));
        // 3 events at the start, 4 per tick, the completion: many more events than stored rows (one per wait point).
        Assert.True(whole.Items.Count > 4 * TickCount, $"{whole.Items.Count} events");
        Assert.Equal(Enumerable.Range(0, whole.Items.Count), whole.Items.Select(e => e.Sequence));
        Assert.Equal(whole.Items.Count, whole.Total);
        Assert.Null(whole.Next);

        // Page sizes that cut the stored rows anywhere: at their start, inside them, across several.
        foreach (var limit in new[] { 1, 2, 3, 5, 7, whole.Items.Count - 1, whole.Items.Count })
        {
            var pages = await Api.PagesAsync<HistoryEventView>($"/instances/{id}/history?limit={limit}");
            var events = pages.SelectMany(p => p.Items).ToList();
            Assert.Equal(whole.Items.Select(e => (e.Sequence, e.Type, e.StepId, e.At)), events.Select(e => (e.Sequence, e.Type, e.StepId, e.At)));
            Assert.All(pages, p => Assert.Equal((whole.Items.Count, limit), (p.Total, p.Limit)));
            Assert.All(pages.SkipLast(1), p => Assert.Equal(limit, p.Items.Count));
            // The last page is the one that says so: no page after it comes back empty.
            Assert.NotEmpty(pages[^1].Items);
        }
    }

    [Fact]
    public async Task Paging_through_an_instances_signals_returns_each_once_oldest_first()
    {
        var id = await CompletedTicksAsync();
        var whole = Assert.Single(await Api.PagesAsync<SignalView>($"/instances/{id}/signals?limit=500"));
        Assert.Equal(TickCount, whole.Items.Count(s => s.Name == "tick"));
        Assert.Equal(whole.Items.OrderBy(s => s.CreatedAt).Select(s => s.CreatedAt), whole.Items.Select(s => s.CreatedAt));

        foreach (var limit in new[] { 1, 2, 4 })
        {
            var pages = await Api.PagesAsync<SignalView>($"/instances/{id}/signals?limit={limit}");
            Assert.Equal(whole.Items.Select(s => s.Id), pages.SelectMany(p => p.Items).Select(s => s.Id));
            Assert.All(pages, p => Assert.Equal(whole.Items.Count, p.Total));
            Assert.NotEmpty(pages[^1].Items);
        }
    }

    [Fact]
    public async Task Paging_through_a_definitions_versions_returns_each_once_by_number()
    {
        var name = Definitions.Unique("versions");
        for (var v = 0; v < 5; v++)
        {
            await Api.PublishAsync(v % 2 == 0 ? Definitions.SignalRoundtrip(name) : Definitions.TwoWaits(name));
        }

        foreach (var limit in new[] { 1, 2, 5, 50 })
        {
            var pages = await Api.PagesAsync<DefinitionView>($"/definitions/{name}?limit={limit}");
            Assert.Equal([1, 2, 3, 4, 5], pages.SelectMany(p => p.Items).Select(v => v.Version));
            Assert.All(pages.SelectMany(p => p.Items), v => Assert.Equal(name, v.Name));
            Assert.All(pages, p => Assert.Equal(5, p.Total));
        }
    }

    [Fact]
    public async Task Without_limit_a_list_answers_its_first_page_of_50_with_the_cursor_of_the_next()
    {
        var name = Definitions.Unique("default-page");
        for (var v = 0; v < 51; v++)
        {
            await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        }

        var first = (await Api.Http.GetFromJsonAsync<PageView<DefinitionView>>($"/definitions/{name}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal((50, 51, 50, 0), (first.Items.Count, first.Total, first.Limit, first.Offset));
        Assert.NotNull(first.Next);
        var second = (await Api.Http.GetFromJsonAsync<PageView<DefinitionView>>($"/definitions/{name}?after={first.Next}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal(51, Assert.Single(second.Items).Version);
        Assert.Null(second.Next);
    }

    [Fact]
    public async Task A_cursor_past_the_end_answers_an_empty_last_page()
    {
        var id = await CompletedTicksAsync();
        var name = Definitions.Unique("past-end");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var lastSignal = (await Api.SignalsAsync(id))[^1];
        // Cursors of items that were last when their page was read, or of items the list has not reached yet.
        var cases = new[]
        {
            $"/instances/{id}/history?after={ListCursor.EncodeHistory(100_000)}",
            $"/instances/{id}/signals?after={ListCursor.Encode(new SignalPosition(lastSignal.CreatedAt, lastSignal.Id))}",
            $"/definitions/{name}?after={ListCursor.EncodeVersion(1)}",
        };
        foreach (var path in cases)
        {
            using var response = await Api.Http.GetAsync(path, Token);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            var page = (await response.Content.ReadFromJsonAsync<PageView<object>>(WorkflowServiceFactory.Json, Token))!;
            Assert.True(page.Items.Count == 0 && page.Next is null && page.Total > 0, $"{path}: {page.Items.Count} items, next {page.Next}");
        }
    }

    [Theory]
    [InlineData("limit=0", "limit", "limit must be between 1 and 500")]
    [InlineData("limit=501", "limit", "limit must be between 1 and 500")]
    [InlineData("after=not-a-cursor!", "after", "after must be the next of a page of this list, as the service returned it")]
    [InlineData("after=", "after", "after must be the next of a page of this list, as the service returned it")]
    public async Task A_bad_limit_or_cursor_is_a_problem_that_names_the_parameter(string query, string field, string message)
    {
        var id = await CompletedTicksAsync(ticks: 1);
        var name = Definitions.Unique("bad-page");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        foreach (var list in new[] { $"/instances/{id}/history", $"/instances/{id}/signals", $"/definitions/{name}" })
        {
            await AssertInvalidAsync($"{list}?{query}", field, message);
        }
    }

    [Fact]
    public async Task A_cursor_of_another_list_is_refused()
    {
        var id = await CompletedTicksAsync(ticks: 1);
        var name = Definitions.Unique("other-cursor");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var signal = (await Api.SignalsAsync(id))[0];
        var instanceCursor = ListCursor.Encode(new InstancePosition(signal.CreatedAt, id));
        var historyCursor = ListCursor.EncodeHistory(1);
        var signalCursor = ListCursor.Encode(new SignalPosition(signal.CreatedAt, signal.Id));
        var versionCursor = ListCursor.EncodeVersion(1);
        const string message = "after must be the next of a page of this list, as the service returned it";

        await AssertInvalidAsync($"/instances/{id}/history?after={signalCursor}", "after", message);
        await AssertInvalidAsync($"/instances/{id}/history?after={versionCursor}", "after", message);
        await AssertInvalidAsync($"/instances/{id}/signals?after={historyCursor}", "after", message);
        await AssertInvalidAsync($"/instances/{id}/signals?after={instanceCursor}", "after", message);
        await AssertInvalidAsync($"/definitions/{name}?after={historyCursor}", "after", message);
        await AssertInvalidAsync($"/instances?after={signalCursor}", "after", message);
    }

    private async Task AssertInvalidAsync(string path, string field, string message)
    {
        using var response = await Api.Http.GetAsync(path, Token);
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        Assert.True(message == (string?)problem["detail"], $"{path}: {problem}");
        Assert.Equal(message, (string?)problem["errors"]![field]![0]);
    }

    /// <summary>An instance of <see cref="Definitions.Ticks"/> signalled to its end, one tick after the other was applied.</summary>
    private async Task<Guid> CompletedTicksAsync(int ticks = TickCount)
    {
        var name = Definitions.Unique("ticks");
        await Api.PublishAsync(Definitions.Ticks(name, ticks));
        var instance = await Api.StartAsync(name);
        await Api.SignalOneAfterAnotherAsync(instance.Id, "tick", ticks);
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(ticks, done.Output!.Value.GetProperty("n").GetInt32());
        return instance.Id;
    }
}

public sealed class SqlitePagingApiTests : PagingApiTests<SqliteBackend>;

public sealed class PostgresPagingApiTests : PagingApiTests<PostgresBackend>;

public sealed class MongoDbPagingApiTests : PagingApiTests<MongoDbBackend>;
