using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Console;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Security;

/// <summary>
/// Tenants through the real authentication handlers: two API keys with the same roles in tenants "acme" and "globex",
/// and one in the default tenant. Each publishes a definition of the same name and starts instances with the same keys;
/// every list shows a caller only its own tenant's data, and every single-object endpoint answers another tenant's id as
/// an unknown one (404, the same message) and changes nothing.
/// </summary>
public abstract class TenantIsolationTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static readonly TestApiKey AcmeKey = TestApiKey.ForTenant("acme", "acme-admin", "admin");
    private static readonly TestApiKey GlobexKey = TestApiKey.ForTenant("globex", "globex-admin", "admin");
    private static readonly TestApiKey DefaultKey = TestApiKey.Create("default-admin", "admin");

    private static readonly string[] TwoTenants = ["acme", "globex"];

    private TestIssuer _issuer = null!;

    protected override Dictionary<string, string?> Settings => new(
        TestApiKey.Settings(AcmeKey, GlobexKey, DefaultKey)
            .Concat(_issuer.Settings)
            .Append(new("Engine:RetryBackoff", "00:00:00.010"))
            .Append(new("Engine:MaxAttempts", "3")));

    public override async ValueTask InitializeAsync()
    {
        _issuer = await TestIssuer.SharedAsync();
        await base.InitializeAsync();
    }

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private ApiClient With(TestApiKey key)
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        Own(new Disposing(client));
        return new ApiClient(client);
    }

    private ApiClient WithToken(string token)
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        Own(new Disposing(client));
        return new ApiClient(client);
    }

    /// <summary>A review task, then a wait for "go" whose payload can make the next step fail.</summary>
    private static string Orders(string name, string description) => $$"""
        {
          "name": "{{name}}",
          "description": "{{description}}",
          "steps": [
            { "id": "review", "type": "humanTask", "title": "Review", "output": "review" },
            { "id": "wait-go", "type": "waitForSignal", "signal": "go", "output": "go" },
            { "id": "boom", "type": "assign", "set": { "x": "vars.go.explode ? noSuchFunction() : 1" } },
            { "id": "done", "type": "complete", "result": "vars.x" }
          ]
        }
        """;

    /// <summary>What one tenant made: a waiting instance (at its open task) and a faulted one (with its dead letter).</summary>
    private sealed record TenantData(ApiClient Api, InstanceView Waiting, TaskView Task, InstanceView Faulted, SignalView DeadLetter)
    {
        public Guid[] InstanceIds => [Waiting.Id, Faulted.Id];
    }

    private static async Task<TenantData> PopulateAsync(ApiClient api, string name, string description)
    {
        await api.PublishAsync(Orders(name, description));
        var waiting = await api.StartAsync(name, businessKey: "order-1");
        var task = await OpenTaskAsync(api, waiting.Id);

        var faulted = await api.StartAsync(name, businessKey: "order-2");
        var faultedTask = await OpenTaskAsync(api, faulted.Id);
        using (var complete = await api.Http.PostAsJsonAsync($"/tasks/{faultedTask.Id}/complete", new { result = "ok" }, Token))
        {
            Assert.Equal(HttpStatusCode.OK, complete.StatusCode);
        }

        // Sent once the instance waits for it, so that this signal (not the task's) is the one dead-lettered.
        await Eventually.WaitUntilAsync(async () => (await api.GetAsync(faulted.Id)).Wait?.StepId == "wait-go");
        var signal = await api.SignalAsync(faulted.Id, "go", new { explode = true });
        await api.WaitForAsync(faulted.Id, InstanceStatus.Faulted);
        return new TenantData(api, await api.GetAsync(waiting.Id), task, await api.GetAsync(faulted.Id), signal);
    }

    private static async Task<TaskView> OpenTaskAsync(ApiClient api, Guid instanceId)
    {
        TaskView? task = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            task = (await ListAsync<TaskView>(api, $"/tasks?instanceId={instanceId}&status=Open")).SingleOrDefault();
            return task is not null;
        });
        return task!;
    }

    private static async Task<IReadOnlyList<T>> ListAsync<T>(ApiClient api, string path) =>
        (await api.Http.GetFromJsonAsync<PageView<T>>(path, WorkflowServiceFactory.Json, Token))!.Items;

    [Fact]
    public async Task Each_tenant_sees_only_its_own_definitions_instances_tasks_signals_and_dead_letters()
    {
        var name = Definitions.Unique("orders");
        var acme = await PopulateAsync(With(AcmeKey), name, "acme's orders");
        var globex = await PopulateAsync(With(GlobexKey), name, "globex's orders");
        // Globex publishes a second version; acme's name stays at version 1.
        await globex.Api.PublishAsync(Orders(name, "globex's orders, v2"));
        var fallback = await PopulateAsync(With(DefaultKey), name, "the default tenant's orders");

        var everyone = new[] { acme, globex, fallback };
        foreach (var (me, expectedLatest) in new[] { (acme, 1), (globex, 2), (fallback, 1) })
        {
            var others = everyone.Where(t => t != me).SelectMany(t => t.InstanceIds).ToHashSet();
            var api = me.Api;

            var definitions = await api.Http.GetFromJsonAsync<List<DefinitionSummaryView>>("/definitions", WorkflowServiceFactory.Json, Token);
            var summary = Assert.Single(definitions!, d => d.Name == name);
            Assert.Equal(expectedLatest, summary.LatestVersion);
            var versions = await api.EveryPageAsync<DefinitionView>($"/definitions/{name}?limit=1");
            Assert.Equal(expectedLatest, versions.Count);
            Assert.All(versions, v => Assert.StartsWith(me == acme ? "acme" : me == globex ? "globex" : "the default", v.Description, StringComparison.Ordinal));

            var instances = await ListAsync<InstanceSummaryView>(api, $"/instances?definition={name}");
            Assert.Equal(me.InstanceIds.Order(), instances.Select(i => i.Id).Order());
            var byKey = await ListAsync<InstanceSummaryView>(api, $"/instances?definition={name}&businessKey=order-1");
            Assert.Equal(me.Waiting.Id, Assert.Single(byKey).Id);
            var all = await ListAsync<InstanceSummaryView>(api, "/instances?limit=500");
            Assert.DoesNotContain(all, i => others.Contains(i.Id));

            var tasks = await ListAsync<TaskView>(api, "/tasks?limit=500");
            Assert.Contains(tasks, t => t.Id == me.Task.Id);
            Assert.DoesNotContain(tasks, t => others.Contains(t.InstanceId));

            var deadLetters = await ListAsync<SignalView>(api, "/dead-letters?limit=500");
            Assert.Contains(deadLetters, d => d.Id == me.DeadLetter.Id);
            Assert.DoesNotContain(deadLetters, d => others.Contains(d.InstanceId));

            var signals = await ListAsync<SignalView>(api, "/signals?limit=500");
            Assert.Contains(signals, s => s.Id == me.DeadLetter.Id);
            Assert.DoesNotContain(signals, s => others.Contains(s.InstanceId));
            var deadSignals = await ListAsync<SignalView>(api, "/signals?status=DeadLettered&limit=500");
            Assert.DoesNotContain(deadSignals, s => others.Contains(s.InstanceId));
        }
    }

    /// <summary>A definition whose one search attribute, "tier", has the type the tenant chose.</summary>
    private static string Tiered(string name, string type, string value) => $$"""
        {
          "name": "{{name}}",
          "searchAttributes": { "tier": { "type": "{{type}}", "value": "{{value}}" } },
          "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "go" }, { "id": "end", "type": "complete" } ]
        }
        """;

    [Fact]
    public async Task Each_tenant_declares_its_own_search_attributes_and_searches_and_counts_only_its_own_instances()
    {
        var name = Definitions.Unique("tiers");
        var acme = With(AcmeKey);
        var globex = With(GlobexKey);
        // The same name with another type in each tenant: neither declaration is the other's concern.
        await acme.PublishAsync(Tiered(name, "keyword", "input.tier"));
        await globex.PublishAsync(Tiered(name, "number", "input.level"));
        var acmeGold = await acme.StartAsync(name, new { tier = "gold" });
        await acme.StartAsync(name, new { tier = "silver" });
        var globexOne = await globex.StartAsync(name, new { level = 1 });
        await globex.StartAsync(name, new { level = 2 });

        var found = await ListAsync<InstanceSummaryView>(acme, $"/instances?filter={Uri.EscapeDataString($"definition = \"{name}\" and tier = \"gold\"")}");
        Assert.Equal([acmeGold.Id], found.Select(i => i.Id));
        found = await ListAsync<InstanceSummaryView>(globex, $"/instances?filter={Uri.EscapeDataString($"definition = \"{name}\" and tier <= 1")}");
        Assert.Equal([globexOne.Id], found.Select(i => i.Id));
        var sorted = await ListAsync<InstanceSummaryView>(globex, $"/instances?orderBy=tier&filter={Uri.EscapeDataString($"definition = \"{name}\"")}");
        Assert.Equal(2, sorted.Count);

        // Each tenant's type holds in its own filters: a number is not a keyword in acme, nor a string a number in globex.
        using (var wrongType = await acme.Http.GetAsync($"/instances?filter={Uri.EscapeDataString("tier = 1")}", Token))
        {
            Assert.Contains("'tier'", (string?)(await ApiClient.ProblemAsync(wrongType, HttpStatusCode.BadRequest))["errors"]!["filter"]![0],
                StringComparison.Ordinal);
        }

        // The default tenant declared no "tier": another tenant's declaration does not make it searchable there.
        using (var undeclared = await With(DefaultKey).Http.GetAsync($"/instances?filter={Uri.EscapeDataString("tier = \"gold\"")}", Token))
        {
            Assert.Contains("'tier'", (string?)(await ApiClient.ProblemAsync(undeclared, HttpStatusCode.BadRequest))["errors"]!["filter"]![0],
                StringComparison.Ordinal);
        }

        var counts = (await acme.Http.GetFromJsonAsync<SearchCountsView>(
            $"/instances/counts?by=tier&filter={Uri.EscapeDataString($"definition = \"{name}\"")}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal([("gold", 1L), ("silver", 1L)], counts.Values.Select(v => (v.Value.GetString()!, v.Count)).Order());
        var globexCounts = (await globex.Http.GetFromJsonAsync<SearchCountsView>(
            $"/instances/counts?by=tier&filter={Uri.EscapeDataString($"definition = \"{name}\"")}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal([(1m, 1L), (2m, 1L)], globexCounts.Values.Select(v => (v.Value.GetDecimal(), v.Count)).Order());
    }

    [Fact]
    public async Task Every_single_object_endpoint_answers_another_tenants_ids_as_unknown_and_changes_nothing()
    {
        var name = Definitions.Unique("orders");
        var acme = await PopulateAsync(With(AcmeKey), name, "acme's orders");
        var globex = With(GlobexKey);
        await globex.PublishAsync(Orders(name, "globex's orders"));
        await globex.PublishAsync(Orders(name, "globex's orders, v2"));
        var acmeOnly = Definitions.Unique("acme-only");
        await acme.Api.PublishAsync(Definitions.SignalRoundtrip(acmeOnly));
        var historyBefore = await acme.Api.HistoryAsync(acme.Waiting.Id);
        var signalsBefore = await acme.Api.SignalsAsync(acme.Waiting.Id);
        // Cursors the owner was given: a later page of another tenant's list is as unknown as its first.
        var historyCursor = (await acme.Api.Http.GetFromJsonAsync<PageView<HistoryEventView>>($"/instances/{acme.Waiting.Id}/history?limit=1",
            WorkflowServiceFactory.Json, Token))!.Next;
        var signalsCursor = ListCursor.Encode(new SignalPosition(DateTime.UnixEpoch, Guid.Empty));
        var versionsCursor = ListCursor.EncodeVersion(0);
        Assert.NotNull(historyCursor);

        var id = acme.Waiting.Id;
        var notFound = $"No instance has the id {id}.";
        var cases = new (string What, Func<Task<HttpResponseMessage>> Call, string Detail)[]
        {
            ("get", () => globex.Http.GetAsync($"/instances/{id}", Token), notFound),
            ("history", () => globex.Http.GetAsync($"/instances/{id}/history", Token), notFound),
            ("signals", () => globex.Http.GetAsync($"/instances/{id}/signals", Token), notFound),
            ("a later page of the history", () => globex.Http.GetAsync($"/instances/{id}/history?limit=1&after={historyCursor}", Token), notFound),
            ("a later page of the signals", () => globex.Http.GetAsync($"/instances/{id}/signals?limit=1&after={signalsCursor}", Token), notFound),
            ("diagram", () => globex.Http.GetAsync($"/instances/{id}/diagram.svg", Token), notFound),
            // Its revision is past 0: were the instance found, the wait would answer it at once.
            ("wait for a change", () => globex.Http.GetAsync($"/instances/{id}?afterRevision=0&timeout=10", Token), notFound),
            ("cancel", () => globex.Http.PostAsJsonAsync($"/instances/{id}/cancel", new { reason = "hostile" }, Token), notFound),
            ("terminate", () => globex.Http.PostAsJsonAsync($"/instances/{id}/terminate", new { reason = "hostile" }, Token), notFound),
            ("suspend", () => globex.Http.PostAsJsonAsync($"/instances/{id}/suspend", new { reason = "hostile" }, Token), notFound),
            ("resume", () => globex.Http.PostAsync($"/instances/{acme.Faulted.Id}/resume", null, Token), $"No instance has the id {acme.Faulted.Id}."),
            ("send a signal", () => globex.Http.PostAsJsonAsync($"/instances/{id}/signals", new { name = "go" }, Token), notFound),
            ("migrate", () => globex.Http.PostAsJsonAsync($"/instances/{id}/migrate", new { toVersion = 2 }, Token), "no such instance"),
            ("get the task", () => globex.Http.GetAsync($"/tasks/{acme.Task.Id}", Token), $"No task has the id {acme.Task.Id}."),
            ("claim the task", () => globex.Http.PostAsJsonAsync($"/tasks/{acme.Task.Id}/claim", new { }, Token), $"No task has the id {acme.Task.Id}."),
            ("complete the task", () => globex.Http.PostAsJsonAsync($"/tasks/{acme.Task.Id}/complete", new { result = "forged" }, Token),
                $"No task has the id {acme.Task.Id}."),
            ("replay the dead letter", () => globex.Http.PostAsync($"/dead-letters/{acme.DeadLetter.Id}/replay", null, Token),
                $"No signal has the id {acme.DeadLetter.Id}."),
            ("get a definition", () => globex.Http.GetAsync($"/definitions/{acmeOnly}", Token), $"No definition is named '{acmeOnly}'."),
            ("a later page of a definition's versions", () => globex.Http.GetAsync($"/definitions/{acmeOnly}?limit=1&after={versionsCursor}", Token),
                $"No definition is named '{acmeOnly}'."),
            ("get a version", () => globex.Http.GetAsync($"/definitions/{acmeOnly}/versions/1", Token), $"Definition '{acmeOnly}' has no version 1."),
            ("get a diagram", () => globex.Http.GetAsync($"/definitions/{acmeOnly}/versions/1/diagram.svg", Token),
                $"Definition '{acmeOnly}' has no version 1."),
            ("start an instance", () => globex.Http.PostAsJsonAsync("/instances", new { definition = acmeOnly }, Token), $"No definition is named '{acmeOnly}'."),
        };
        foreach (var (what, call, detail) in cases)
        {
            using var response = await call();
            var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
            Assert.True(detail == (string?)problem["detail"], $"{what}: {problem["detail"]}");
        }

        // The same answers for ids nobody has: nothing tells a foreign id from an unknown one.
        var unknown = Guid.NewGuid();
        using (var response = await globex.Http.GetAsync($"/instances/{unknown}", Token))
        {
            Assert.Equal($"No instance has the id {unknown}.", (string?)(await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound))["detail"]);
        }

        // A long-poll on another tenant's instance answers at once: it neither waits nor tells the instance exists.
        var polling = Stopwatch.StartNew();
        using (var poll = await globex.Http.GetAsync($"/instances/{id}?waitFor=Completed&timeout=10", Token))
        {
            Assert.Equal(notFound, (string?)(await ApiClient.ProblemAsync(poll, HttpStatusCode.NotFound))["detail"]);
        }

        Assert.True(polling.Elapsed < TimeSpan.FromSeconds(5), $"the long-poll took {polling.Elapsed}");

        // Migrating "every instance" of the name moves only globex's own (it has none waiting): acme's stay where they are.
        using (var many = await globex.Http.PostAsJsonAsync("/instances/migrate", new { definition = name, toVersion = 2 }, Token))
        {
            var report = await many.Content.ReadFromJsonAsync<MigrationReport>(WorkflowServiceFactory.Json, Token);
            Assert.Equal(HttpStatusCode.OK, many.StatusCode);
            Assert.DoesNotContain(report!.Instances, i => acme.InstanceIds.Contains(i.InstanceId));
        }

        // The owner finds everything as it was.
        var waiting = await acme.Api.GetAsync(id);
        Assert.Equal(InstanceStatus.Waiting, waiting.Status);
        Assert.Equal(1, waiting.Version);
        Assert.Equal("review", waiting.Wait!.StepId);
        Assert.Equal(historyBefore.Count, (await acme.Api.HistoryAsync(id)).Count);
        Assert.Equal(signalsBefore.Count, (await acme.Api.SignalsAsync(id)).Count);
        Assert.Equal(InstanceStatus.Faulted, (await acme.Api.GetAsync(acme.Faulted.Id)).Status);
        var task = await acme.Api.Http.GetFromJsonAsync<TaskView>($"/tasks/{acme.Task.Id}", WorkflowServiceFactory.Json, Token);
        Assert.Equal(HumanTaskStatus.Open, task!.Status);
        Assert.Null(task.ClaimedBy);
        var dead = Assert.Single(await ListAsync<SignalView>(acme.Api, "/dead-letters?limit=500"), d => d.Id == acme.DeadLetter.Id);
        Assert.Equal(SignalStatus.DeadLettered, dead.Status);
        Assert.Empty(await ListAsync<InstanceSummaryView>(globex, $"/instances?definition={acmeOnly}"));

        // And the owner itself may do what globex could not.
        using (var suspend = await acme.Api.Http.PostAsJsonAsync($"/instances/{id}/suspend", new { reason = "mine" }, Token))
        {
            Assert.Equal(HttpStatusCode.OK, suspend.StatusCode);
        }
    }

    [Fact]
    public async Task The_console_answers_another_tenants_ids_as_unknown_and_changes_nothing()
    {
        var acme = await PopulateAsync(With(AcmeKey), Definitions.Unique("orders"), "acme's orders");
        using var browser = ConsoleForms.Browser(Factory);
        await ConsoleForms.SignInAsync(browser, GlobexKey.Key);
        var antiforgery = ConsoleForms.Token(await browser.GetStringAsync("/console/instances", Token));
        FormUrlEncodedContent Form(params string[] fields) =>
            new([new("__antiforgery", antiforgery), .. fields.Select(f => f.Split('=', 2)).Select(f => new KeyValuePair<string, string>(f[0], f[1]))]);

        var id = acme.Waiting.Id;
        var noInstance = $"No instance has the id {id}.";
        var noSignal = $"No signal has the id {acme.DeadLetter.Id}.";
        var noTask = $"No task has the id {acme.Task.Id}.";
        var cases = new (string What, Func<Task<HttpResponseMessage>> Call, string Detail)[]
        {
            ("the instance page", () => browser.GetAsync($"/console/instances/{id}", Token), noInstance),
            ("confirm a signal", () => browser.PostAsync($"/console/instances/{id}/confirm", Form("action=signal", "signalName=go"), Token), noInstance),
            ("confirm a termination", () => browser.PostAsync($"/console/instances/{id}/confirm", Form("action=terminate"), Token), noInstance),
            ("confirm a migration", () => browser.PostAsync($"/console/instances/{id}/confirm", Form("action=migrate", "toVersion=1"), Token), noInstance),
            ("send a signal", () => browser.PostAsync($"/console/instances/{id}/signal", Form("signalName=go"), Token), noInstance),
            ("cancel", () => browser.PostAsync($"/console/instances/{id}/cancel", Form(), Token), noInstance),
            ("terminate", () => browser.PostAsync($"/console/instances/{id}/terminate", Form(), Token), noInstance),
            ("suspend", () => browser.PostAsync($"/console/instances/{id}/suspend", Form(), Token), noInstance),
            ("resume", () => browser.PostAsync($"/console/instances/{acme.Faulted.Id}/resume", Form(), Token), $"No instance has the id {acme.Faulted.Id}."),
            ("migrate", () => browser.PostAsync($"/console/instances/{id}/migrate", Form("toVersion=1"), Token), noInstance),
            ("confirm a replay", () => browser.PostAsync($"/console/dead-letters/{acme.DeadLetter.Id}/confirm", Form(), Token), noSignal),
            ("replay", () => browser.PostAsync($"/console/dead-letters/{acme.DeadLetter.Id}/replay", Form(), Token), noSignal),
            ("confirm a claim", () => browser.PostAsync($"/console/tasks/{acme.Task.Id}/confirm", Form("action=claim"), Token), noTask),
            ("claim the task", () => browser.PostAsync($"/console/tasks/{acme.Task.Id}/claim", Form(), Token), noTask),
            ("complete the task", () => browser.PostAsync($"/console/tasks/{acme.Task.Id}/complete", Form("result={}"), Token), noTask),
        };
        foreach (var (what, call, detail) in cases)
        {
            using var response = await call();
            var page = await response.Content.ReadAsStringAsync(Token);
            Assert.True(response.StatusCode == HttpStatusCode.NotFound, $"{what}: {(int)response.StatusCode}");
            Assert.True(page.Contains(detail, StringComparison.Ordinal), $"{what}: the page does not say '{detail}'");
        }

        using (var live = await browser.GetAsync($"/console/live/instances/{id}?version=0", Token))
        {
            Assert.Equal(HttpStatusCode.NotFound, live.StatusCode);
        }

        // The owner finds everything as it was.
        var waiting = await acme.Api.GetAsync(id);
        Assert.Equal((InstanceStatus.Waiting, 1), (waiting.Status, waiting.Version));
        Assert.Equal(InstanceStatus.Faulted, (await acme.Api.GetAsync(acme.Faulted.Id)).Status);
        var task = await acme.Api.Http.GetFromJsonAsync<TaskView>($"/tasks/{acme.Task.Id}", WorkflowServiceFactory.Json, Token);
        Assert.Equal((HumanTaskStatus.Open, null), (task!.Status, task.ClaimedBy));
        Assert.Contains(await ListAsync<SignalView>(acme.Api, "/dead-letters?limit=500"), d => d.Id == acme.DeadLetter.Id);
    }

    [Fact]
    public async Task The_same_business_and_idempotency_keys_make_one_instance_in_each_tenant()
    {
        var name = Definitions.Unique("keys");
        var acme = With(AcmeKey);
        var globex = With(GlobexKey);
        var fallback = With(DefaultKey);
        foreach (var api in new[] { acme, globex, fallback })
        {
            await api.PublishAsync(Definitions.SignalRoundtrip(name));
        }

        var byBusinessKey = new List<Guid>();
        var byIdempotencyKey = new List<Guid>();
        var idempotencyKey = "idem-" + Guid.NewGuid();
        foreach (var api in new[] { acme, globex, fallback })
        {
            var first = await api.StartAsync(name, businessKey: "customer-42");
            Assert.Equal(first.Id, (await api.StartAsync(name, businessKey: "customer-42", expected: HttpStatusCode.OK)).Id);
            byBusinessKey.Add(first.Id);

            var keyed = await api.StartAsync(name, idempotencyKey: idempotencyKey);
            Assert.Equal(keyed.Id, (await api.StartAsync(name, idempotencyKey: idempotencyKey, expected: HttpStatusCode.OK)).Id);
            byIdempotencyKey.Add(keyed.Id);
        }

        Assert.Equal(3, byBusinessKey.Distinct().Count());
        Assert.Equal(3, byIdempotencyKey.Distinct().Count());
        Assert.Equal(byBusinessKey[0], Assert.Single(await ListAsync<InstanceSummaryView>(acme, $"/instances?businessKey=customer-42&definition={name}")).Id);
        Assert.Equal(byBusinessKey[1], Assert.Single(await ListAsync<InstanceSummaryView>(globex, $"/instances?businessKey=customer-42&definition={name}")).Id);

        // Each tenant's signal reaches its own instance only.
        await globex.SignalAsync(byBusinessKey[1], "go", new { value = "globex" });
        Assert.Equal("globex", (await globex.WaitForAsync(byBusinessKey[1], InstanceStatus.Completed)).Output!.Value.GetProperty("result").GetString());
        Assert.Equal(InstanceStatus.Waiting, (await acme.GetAsync(byBusinessKey[0])).Status);
    }

    [Fact]
    public async Task A_child_workflow_runs_in_its_parents_tenant_with_that_tenants_definition()
    {
        var child = Definitions.Unique("child");
        var parent = Definitions.Unique("parent");
        var parentDefinition = $$"""
            {
              "name": "{{parent}}",
              "steps": [
                { "id": "delegate", "type": "subWorkflow", "definition": "{{child}}", "output": "child" },
                { "id": "done", "type": "complete", "result": "({ status: vars.child.status, result: vars.child.output.result })" }
              ]
            }
            """;
        var acme = With(AcmeKey);
        var globex = With(GlobexKey);
        await acme.PublishAsync(Definitions.SignalRoundtrip(child));
        await acme.PublishAsync(parentDefinition);
        // Globex has a parent of the same name but no child definition of its own: acme's is not found for it.
        await globex.PublishAsync(parentDefinition);

        var started = await acme.StartAsync(parent);
        InstanceSummaryView? childInstance = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            childInstance = (await ListAsync<InstanceSummaryView>(acme, $"/instances?definition={child}")).SingleOrDefault();
            return childInstance is { Status: InstanceStatus.Waiting };
        });
        Assert.Empty(await ListAsync<InstanceSummaryView>(globex, $"/instances?definition={child}"));
        await ApiClient.ProblemAsync(await globex.Http.GetAsync($"/instances/{childInstance!.Id}", Token), HttpStatusCode.NotFound);
        await ApiClient.ProblemAsync(await With(DefaultKey).Http.GetAsync($"/instances/{childInstance.Id}", Token), HttpStatusCode.NotFound);

        await acme.SignalAsync(childInstance.Id, "go", new { value = "from acme" });
        var done = await acme.WaitForAsync(started.Id, InstanceStatus.Completed);
        Assert.Equal("from acme", done.Output!.Value.GetProperty("result").GetString());

        var orphan = await globex.StartAsync(parent);
        var faulted = await globex.WaitForAsync(orphan.Id, InstanceStatus.Faulted);
        Assert.Contains($"definition '{child}'", faulted.Error, StringComparison.Ordinal);
        Assert.Contains("does not exist", faulted.Error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Only_callers_of_the_default_tenant_read_the_node_metrics()
    {
        var problem = await ApiClient.ProblemAsync(await With(AcmeKey).Http.GetAsync("/metrics", Token), HttpStatusCode.Forbidden);
        Assert.Contains("default tenant", (string?)problem["detail"], StringComparison.Ordinal);
        using var token = await WithToken(_issuer.Token("olga", ["admin"], claims: new Dictionary<string, object> { ["tenant"] = "globex" }))
            .Http.GetAsync("/metrics", Token);
        await ApiClient.ProblemAsync(token, HttpStatusCode.Forbidden);
        Assert.Equal(HttpStatusCode.OK, (await With(DefaultKey).Http.GetAsync("/metrics", Token)).StatusCode);
    }

    [Fact]
    public async Task Only_callers_of_the_default_tenant_manage_the_database_every_tenant_shares()
    {
        foreach (var (method, path) in new[] { ("GET", "/admin/schema"), ("POST", "/admin/schema/migrate"), ("GET", "/admin/retention"), ("POST", "/admin/retention/purge") })
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), path);
            var problem = await ApiClient.ProblemAsync(await With(AcmeKey).Http.SendAsync(request, Token), HttpStatusCode.Forbidden);
            Assert.Contains("default tenant", (string?)problem["detail"], StringComparison.Ordinal);
        }

        Assert.Equal(HttpStatusCode.OK, (await With(DefaultKey).Http.GetAsync("/admin/schema", Token)).StatusCode);
    }

    [Fact]
    public async Task A_tokens_tenant_claim_puts_the_caller_in_that_tenant_and_a_token_naming_two_tenants_is_refused()
    {
        var name = Definitions.Unique("token");
        var acme = With(AcmeKey);
        await acme.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await acme.StartAsync(name);

        var inAcme = WithToken(_issuer.Token("alice", ["admin"], claims: new Dictionary<string, object> { ["tenant"] = "acme" }));
        Assert.Equal(instance.Id, (await inAcme.GetAsync(instance.Id)).Id);
        Assert.Contains(await ListAsync<InstanceSummaryView>(inAcme, $"/instances?definition={name}"), i => i.Id == instance.Id);

        var inDefault = WithToken(_issuer.Token("bob", ["admin"]));
        await ApiClient.ProblemAsync(await inDefault.Http.GetAsync($"/instances/{instance.Id}", Token), HttpStatusCode.NotFound);
        Assert.Empty(await ListAsync<InstanceSummaryView>(inDefault, $"/instances?definition={name}"));

        // A claim of the service's own tenant type in the token names no tenant: only the configured claim does.
        var forged = WithToken(_issuer.Token("mallory", ["admin"], claims: new Dictionary<string, object> { ["workflow:tenant"] = "acme" }));
        await ApiClient.ProblemAsync(await forged.Http.GetAsync($"/instances/{instance.Id}", Token), HttpStatusCode.NotFound);

        var ambiguous = WithToken(_issuer.Token("eve", ["admin"], claims: new Dictionary<string, object> { ["tenant"] = TwoTenants }));
        await ApiClient.ProblemAsync(await ambiguous.Http.GetAsync($"/instances/{instance.Id}", Token), HttpStatusCode.Forbidden);
        await ApiClient.ProblemAsync(await ambiguous.Http.GetAsync("/tasks", Token), HttpStatusCode.Forbidden);
    }

    private sealed class Disposing(HttpClient client) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            client.Dispose();
            return ValueTask.CompletedTask;
        }
    }
}

public sealed class SqliteTenantIsolationTests : TenantIsolationTests<SqliteBackend>;

public sealed class PostgresTenantIsolationTests : TenantIsolationTests<PostgresBackend>;

public sealed class MongoDbTenantIsolationTests : TenantIsolationTests<MongoDbBackend>;
