using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Search;

/// <summary>
/// Search attributes through the real pipeline and store: declared by a definition, written by every commit, filtered,
/// sorted, paged and counted by GET /instances. The tests share one service, so every list is narrowed to the test's own
/// definition, and the attribute names (one type each in the default tenant) are the same in every test.
/// </summary>
public abstract class SearchApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    /// <summary>
    /// A claim: its attributes come from its input, and amount and region from the "update" signal once it arrives;
    /// it then waits for "done".
    /// </summary>
    private static string Claim(string name, bool withAmount = true) => $$"""
        {
          "name": "{{name}}",
          "searchAttributes": {
            "customer": { "type": "keyword", "value": "input.customer ?? null" },
            "region": { "type": "keyword", "value": "vars.region ?? input.region ?? null" },
            {{(withAmount ? "\"amount\": { \"type\": \"number\", \"value\": \"vars.amount ?? input.amount ?? null\" }," : "")}}
            "submittedAt": { "type": "datetime", "value": "input.submittedAt ?? null" },
            "urgent": { "type": "bool", "value": "input.urgent ?? null" },
            "note": { "type": "text", "value": "input.note ?? null" }
          },
          "steps": [
            { "id": "wait-update", "type": "waitForSignal", "signal": "update", "output": "update" },
            { "id": "apply", "type": "assign", "set": { "amount": "vars.update.amount", "region": "vars.update.region" } },
            { "id": "wait-done", "type": "waitForSignal", "signal": "done" },
            { "id": "end", "type": "complete" }
          ]
        }
        """;

    /// <summary>Five claims, A to E: E has a customer and nothing else.</summary>
    private async Task<(string Name, Dictionary<string, Guid> Ids)> ClaimsAsync()
    {
        var name = Definitions.Unique("claims");
        await Api.PublishAsync(Claim(name));
        var inputs = new Dictionary<string, object>
        {
            ["A"] = new { customer = "C-000123", region = "EU", amount = 12000, submittedAt = "2026-11-05T08:00:00Z", urgent = true, note = "Water damage in the kitchen" },
            ["B"] = new { customer = "C-000124", region = "UK", amount = 9000, submittedAt = "2026-10-20T12:00:00+02:00", urgent = false, note = "Broken window" },
            ["C"] = new { customer = "C-100001", region = "US", amount = 15000, submittedAt = "2026-11-20T00:00:00Z", urgent = true, note = "A kitchen fire, then water" },
            ["D"] = new { customer = "C-000125", region = "EU", amount = 10000, submittedAt = "2026-11-01T00:00:00Z", urgent = false },
            ["E"] = new { customer = "X-1" },
        };
        var ids = new Dictionary<string, Guid>();
        foreach (var (label, input) in inputs)
        {
            ids[label] = (await Api.StartAsync(name, input, businessKey: $"key-{label}")).Id;
        }

        return (name, ids);
    }

    private async Task<PageView<InstanceSummaryView>> ListAsync(string query)
    {
        using var response = await Api.Http.GetAsync($"/instances?{query}", Token);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{query}: {await response.Content.ReadAsStringAsync(Token)}");
        return (await response.Content.ReadFromJsonAsync<PageView<InstanceSummaryView>>(WorkflowServiceFactory.Json, Token))!;
    }

    private static string Filter(string filter) => $"filter={Uri.EscapeDataString(filter)}";

    [Fact]
    public async Task Every_operator_on_every_type_and_field_matches_exactly_the_instances_it_names()
    {
        var (name, ids) = await ClaimsAsync();
        var cases = new (string Filter, string Expected)[]
        {
            ("customer = \"C-000123\"", "A"),
            ("customer != \"C-000123\"", "BCDE"),
            ("customer < \"C-000124\"", "A"),
            ("customer >= \"C-100001\"", "CE"),
            ("customer startsWith \"C-000\"", "ABD"),
            ("region = \"EU\"", "AD"),
            ("region != \"EU\"", "BC"),
            ("region in (\"EU\", \"UK\")", "ABD"),
            ("amount > 10000", "AC"),
            ("amount >= 10000", "ACD"),
            ("amount < 10000", "B"),
            ("amount <= 9000", "B"),
            ("amount = 12000", "A"),
            ("amount != 12000", "BCD"),
            ("amount in (9000, 15000)", "BC"),
            ("submittedAt >= \"2026-11-01T00:00:00Z\"", "ACD"),
            ("submittedAt < \"2026-11-01T00:00:00Z\"", "B"),
            ("submittedAt > \"2026-10-20T10:00:00Z\" and submittedAt <= \"2026-11-05T08:00:00Z\"", "AD"),
            ("urgent = true", "AC"),
            ("urgent != true", "BD"),
            ("note = \"kitchen water\"", "AC"),
            ("note startsWith \"Broken\"", "B"),
            ("amount > 10000 and region = \"EU\" and status = \"waiting\"", "A"),
            ("region = \"UK\" or amount > 14000", "BC"),
            ("not region = \"EU\"", "BCE"),
            ("not (region = \"EU\" or region = \"UK\")", "CE"),
            ("region in (\"EU\",\"UK\") and submittedAt >= \"2026-11-01T00:00:00Z\"", "AD"),
            ("businessKey = \"key-B\" or businessKey startsWith \"key-E\"", "BE"),
            ($"definition = \"{name}\" and status = \"completed\"", ""),
        };

        foreach (var (filter, expected) in cases)
        {
            var page = await ListAsync($"definition={name}&{Filter(filter)}");
            var found = string.Concat(ids.Where(kv => page.Items.Any(i => i.Id == kv.Value)).Select(kv => kv.Key).Order());
            Assert.True(expected == found, $"{filter}: expected {expected}, found {found}");
            Assert.Equal(expected.Length, page.Total);
        }
    }

    [Fact]
    public async Task A_view_right_after_a_commit_shows_the_values_exactly_as_the_store_gives_them_back()
    {
        // The view of a version this node committed takes its values from the commit; a list reads them from the store.
        var name = Definitions.Unique("exact");
        await Api.PublishAsync(Claim(name));
        var started = await Api.StartAsync(name, new
        {
            customer = "C-exact", region = "EU", amount = 1234.5678901234567, submittedAt = "2026-11-05T08:00:00.123Z", urgent = true,
            note = "Über die Brücke",
        });
        var fine = await Api.StartAsync(name, new { customer = "C-fine", submittedAt = "2026-11-05T08:00:00.1234567Z" });

        async Task SameAsListedAsync(Guid id, string customer)
        {
            var viewed = JsonSerializer.Serialize((await Api.GetAsync(id)).SearchAttributes);
            var listed = Assert.Single((await ListAsync($"definition={name}&{Filter($"customer = \"{customer}\"")}")).Items);
            Assert.Equal(JsonSerializer.Serialize(listed.SearchAttributes), viewed);
        }

        await SameAsListedAsync(started.Id, "C-exact");
        await SameAsListedAsync(fine.Id, "C-fine");

        await Api.SignalAsync(started.Id, "update", new { amount = 0.30000000000000004, region = "APAC" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(started.Id)).SearchAttributes!["region"].GetString() == "APAC",
            what: "the update's commit wrote region");
        await SameAsListedAsync(started.Id, "C-exact");
    }

    [Fact]
    public async Task The_instance_view_and_a_searched_list_show_the_values_and_a_commit_writes_them_again()
    {
        var (name, ids) = await ClaimsAsync();

        var view = await Api.GetAsync(ids["A"]);
        Assert.Equal("EU", view.SearchAttributes!["region"].GetString());
        Assert.Equal(12000m, view.SearchAttributes["amount"].GetDecimal());
        Assert.Equal(new DateTime(2026, 11, 5, 8, 0, 0, DateTimeKind.Utc), view.SearchAttributes["submittedAt"].GetDateTime().ToUniversalTime());
        Assert.True(view.SearchAttributes["urgent"].GetBoolean());
        Assert.Equal(["amount", "customer", "note", "region", "submittedAt", "urgent"], view.SearchAttributes.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(["customer"], (await Api.GetAsync(ids["E"])).SearchAttributes!.Keys);

        await Api.SignalAsync(ids["A"], "update", new { amount = 500, region = "APAC" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(ids["A"])).SearchAttributes!["region"].GetString() == "APAC", what: "the update's commit wrote region");

        var listed = Assert.Single((await ListAsync($"definition={name}&{Filter("region = \"APAC\" and amount = 500")}")).Items);
        Assert.Equal(ids["A"], listed.Id);
        Assert.Equal("C-000123", listed.SearchAttributes!["customer"].GetString());
        Assert.Empty((await ListAsync($"definition={name}&{Filter("amount = 12000")}")).Items);
    }

    [Fact]
    public async Task Sorting_by_an_attribute_lists_only_instances_that_have_it_in_its_order_a_page_at_a_time()
    {
        var (name, ids) = await ClaimsAsync();

        var pages = await Api.PagesAsync<InstanceSummaryView>($"/instances?definition={name}&orderBy={Uri.EscapeDataString("amount desc")}&limit=1");
        Assert.Equal([ids["C"], ids["A"], ids["D"], ids["B"]], pages.SelectMany(p => p.Items).Select(i => i.Id));
        var ascending = await Api.PagesAsync<InstanceSummaryView>($"/instances?definition={name}&orderBy={Uri.EscapeDataString("submittedAt asc")}&limit=3");
        Assert.Equal([ids["B"], ids["D"], ids["A"], ids["C"]], ascending.SelectMany(p => p.Items).Select(i => i.Id));
        var oldest = await Api.PagesAsync<InstanceSummaryView>($"/instances?definition={name}&orderBy={Uri.EscapeDataString("createdAt asc")}&limit=2");
        Assert.Equal([ids["A"], ids["B"], ids["C"], ids["D"], ids["E"]], oldest.SelectMany(p => p.Items).Select(i => i.Id));

        // A cursor of one order is refused by another.
        using var refused = await Api.Http.GetAsync($"/instances?definition={name}&orderBy={Uri.EscapeDataString("amount asc")}&after={pages[0].Next}", Token);
        Assert.Contains("after", (await ApiClient.ProblemAsync(refused, HttpStatusCode.BadRequest))["errors"]!.AsObject().Select(e => e.Key));
    }

    [Fact]
    public async Task Paging_by_an_attribute_while_ending_what_is_listed_skips_nothing_and_repeats_nothing()
    {
        var name = Definitions.Unique("sorted-paging");
        await Api.PublishAsync(Claim(name));
        var amounts = new Dictionary<Guid, int>();
        for (var i = 0; i < 22; i++)
        {
            // Ties on purpose: the id orders instances of one amount.
            var amount = i % 6 * 100;
            amounts[(await Api.StartAsync(name, new { amount })).Id] = amount;
        }

        var seen = new List<Guid>();
        var endedUnseen = new HashSet<Guid>();
        string? after = null;
        for (var pages = 0; pages < 20; pages++)
        {
            var page = await ListAsync($"definition={name}&{Filter("status = \"waiting\"")}&orderBy={Uri.EscapeDataString("amount desc")}&limit=4"
                                       + (after is null ? "" : $"&after={after}"));
            seen.AddRange(page.Items.Select(i => i.Id));
            // Between pages, one instance already listed and one not yet listed leave the filter.
            foreach (var id in new[] { page.Items.Count > 0 ? page.Items[0].Id : (Guid?)null, amounts.Keys.Except(seen).Except(endedUnseen).Select(id => (Guid?)id).LastOrDefault() }.OfType<Guid>())
            {
                using var ended = await Api.Http.PostAsJsonAsync($"/instances/{id}/terminate", new { reason = "paging" }, Token);
                Assert.Equal(HttpStatusCode.OK, ended.StatusCode);
                if (!seen.Contains(id))
                {
                    endedUnseen.Add(id);
                }
            }

            after = page.Next;
            if (after is null)
            {
                break;
            }
        }

        Assert.Equal(seen.Count, seen.Distinct().Count());
        Assert.Equal(amounts.Keys.Except(endedUnseen).Order(), seen.Order());
        Assert.Equal(seen.Select(id => amounts[id]).OrderDescending(), seen.Select(id => amounts[id]));
    }

    [Theory]
    [InlineData("regoin = \"EU\"", "filter", "regoin")]
    [InlineData("amount = \"lots\"", "filter", "amount")]
    [InlineData("region > 5", "filter", "region")]
    [InlineData("urgent = \"yes\"", "filter", "urgent")]
    [InlineData("status = \"sleeping\"", "filter", "status")]
    public async Task A_filter_on_an_undeclared_or_mistyped_attribute_is_a_problem_naming_it(string filter, string parameter, string attribute)
    {
        var (name, _) = await ClaimsAsync();

        using var response = await Api.Http.GetAsync($"/instances?definition={name}&{Filter(filter)}", Token);

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        var message = (string)problem["errors"]![parameter]![0]!;
        Assert.Contains($"'{attribute}'", message, StringComparison.Ordinal);
        Assert.Equal(attribute, (string?)problem["attribute"]);
        Assert.DoesNotContain("Exception", problem.ToJsonString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("updatedAt desc")]
    [InlineData("amount desc, region asc")]
    [InlineData("regoin asc")]
    public async Task An_order_by_anything_but_one_indexed_field_is_a_problem(string orderBy)
    {
        using var response = await Api.Http.GetAsync($"/instances?orderBy={Uri.EscapeDataString(orderBy)}", Token);

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        Assert.NotNull(problem["errors"]!["orderBy"]);
    }

    [Fact]
    public async Task Counts_by_value_are_most_first_and_follow_the_filter()
    {
        var (name, _) = await ClaimsAsync();

        var counts = (await Api.Http.GetFromJsonAsync<SearchCountsView>(
            $"/instances/counts?by=region&{Filter($"definition = \"{name}\"")}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal([("EU", 2L), ("UK", 1L), ("US", 1L)], counts.Values.Select(v => (v.Value.GetString()!, v.Count)));
        Assert.True(counts.Complete);

        var urgent = (await Api.Http.GetFromJsonAsync<SearchCountsView>(
            $"/instances/counts?by=urgent&top=1&{Filter($"definition = \"{name}\" and amount >= 10000")}", WorkflowServiceFactory.Json, Token))!;
        var top = Assert.Single(urgent.Values);
        Assert.Equal((JsonValueKind.True, 2L), (top.Value.ValueKind, top.Count));

        using var refused = await Api.Http.GetAsync("/instances/counts?by=regoin", Token);
        Assert.Contains("'regoin'", (string?)(await ApiClient.ProblemAsync(refused, HttpStatusCode.BadRequest))["errors"]!["by"]![0], StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_definition_without_attributes_lists_and_shows_as_before()
    {
        // region is declared in the tenant (by another definition), whatever ran before: the filter below is valid.
        await Api.PublishAsync(Claim(Definitions.Unique("claims")));
        var name = Definitions.Unique("plain");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);

        Assert.Null(started.SearchAttributes);
        Assert.Null((await Api.GetAsync(started.Id)).SearchAttributes);
        var listed = Assert.Single((await ListAsync($"definition={name}&{Filter("status = \"waiting\"")}")).Items);
        Assert.Equal(started.Id, listed.Id);
        Assert.Empty((await ListAsync($"definition={name}&{Filter("region = \"EU\"")}")).Items);

        await Api.SignalAsync(started.Id, "go", new { value = 1 });
        Assert.Null((await Api.WaitForAsync(started.Id, InstanceStatus.Completed)).SearchAttributes);
    }

    [Fact]
    public async Task A_start_whose_first_run_fails_is_found_by_its_attributes_while_retried_and_after_a_cancel()
    {
        var name = Definitions.Unique("failing");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "searchAttributes": { "customer": { "type": "keyword", "value": "input.customer ?? null" } },
              "steps": [
                { "id": "boom", "type": "assign", "set": { "x": "input.missing.deep" } },
                { "id": "wait", "type": "waitForSignal", "signal": "go" },
                { "id": "end", "type": "complete" }
              ]
            }
            """);

        var started = await Api.StartAsync(name, new { customer = "C-failing" });

        Assert.Equal(InstanceStatus.Running, started.Status);
        Assert.NotNull(started.Error);
        Assert.Equal("C-failing", started.SearchAttributes!["customer"].GetString());
        Assert.Equal([started.Id], (await ListAsync($"definition={name}&{Filter("customer = \"C-failing\"")}")).Items.Select(i => i.Id));
        // Cancelled before a run ever ended (no cancel path evaluates anything): still found by what its input says.
        using var cancelled = await Api.Http.PostAsJsonAsync($"/instances/{started.Id}/cancel", new { reason = "test" }, Token);
        Assert.Equal(HttpStatusCode.OK, cancelled.StatusCode);
        Assert.Equal([started.Id], (await ListAsync($"definition={name}&{Filter("customer = \"C-failing\" and status = \"cancelled\"")}")).Items.Select(i => i.Id));
    }

    [Fact]
    public async Task A_new_version_may_add_attributes_and_a_migrated_instance_gets_them_at_its_next_commit()
    {
        var name = Definitions.Unique("versions");
        await Api.PublishAsync(Claim(name, withAmount: false));
        var old = await Api.StartAsync(name, new { region = "EU", amount = 700 });
        Assert.False(old.SearchAttributes?.ContainsKey("amount") ?? false);
        await Api.PublishAsync(Claim(name));
        var fresh = await Api.StartAsync(name, new { region = "EU", amount = 700 });

        Assert.Equal([fresh.Id], (await ListAsync($"definition={name}&{Filter("amount = 700")}")).Items.Select(i => i.Id));

        using var migrated = await Api.Http.PostAsJsonAsync($"/instances/{old.Id}/migrate", new { toVersion = 2 }, Token);
        Assert.Equal(HttpStatusCode.OK, migrated.StatusCode);
        // The migration evaluates what the new version adds from the input and variables: no later commit would.
        Assert.Equal(new[] { fresh.Id, old.Id }.Order(), (await ListAsync($"definition={name}&{Filter("amount = 700")}")).Items.Select(i => i.Id).Order());
        await Api.SignalAsync(old.Id, "update", new { amount = 800, region = "EU" });
        await Eventually.WaitUntilAsync(async () => (await ListAsync($"definition={name}&{Filter("amount = 800")}")).Items.Any(i => i.Id == old.Id),
            what: "the migrated instance's next commit wrote amount");

        // A version without the attribute: the migration empties it, so a filter on it no longer finds the instance.
        await Api.PublishAsync(Claim(name, withAmount: false));
        using var dropped = await Api.Http.PostAsJsonAsync($"/instances/{old.Id}/migrate", new { toVersion = 3 }, Token);
        Assert.Equal(HttpStatusCode.OK, dropped.StatusCode);
        Assert.DoesNotContain(old.Id, (await ListAsync($"definition={name}&{Filter("amount = 800")}")).Items.Select(i => i.Id));
        Assert.False((await Api.GetAsync(old.Id)).SearchAttributes?.ContainsKey("amount") ?? false);
        // The attributes both versions have keep their values.
        Assert.Contains(old.Id, (await ListAsync($"definition={name}&{Filter("region = \"EU\"")}")).Items.Select(i => i.Id));
    }

    [Fact]
    public async Task Redeclaring_an_attribute_with_another_type_is_a_problem_at_its_path()
    {
        // The tenant's first definition with these attributes makes region a keyword, whatever ran before.
        await Api.PublishAsync(Claim(Definitions.Unique("claims")));
        var name = Definitions.Unique("retyped");
        var definition = Claim(name).Replace("\"region\": { \"type\": \"keyword\"", "\"region\": { \"type\": \"number\"", StringComparison.Ordinal);

        using var response = await Api.Http.PostAsync("/definitions", new StringContent(definition, System.Text.Encoding.UTF8, "application/json"), Token);

        // As every other problem of a definition: 422 with its diagnostics, each at its path.
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        var diagnostic = Assert.Single(problem["diagnostics"]!.AsArray());
        Assert.Equal("$.searchAttributes.region.type", (string?)diagnostic!["path"]);
        Assert.Contains("'region' is already a keyword search attribute in this tenant", (string?)diagnostic["message"], StringComparison.Ordinal);
        using var notPublished = await Api.Http.GetAsync($"/definitions/{name}", Token);
        Assert.Equal(HttpStatusCode.NotFound, notPublished.StatusCode);
    }
}

public sealed class SqliteSearchApiTests : SearchApiTests<SqliteBackend>;

public sealed class PostgresSearchApiTests : SearchApiTests<PostgresBackend>;

public sealed class MongoDbSearchApiTests : SearchApiTests<MongoDbBackend>;
