using System.Net;
using System.Net.Http.Json;
using System.Text.Json.Nodes;
using WorkflowService.Api;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Events;

/// <summary>
/// Event subscriptions through the real pipeline and authentication handlers: designers manage them, in their tenant
/// only; bad requests are told in the JSON the client sent and write nothing; the secret is shown when it is made and
/// never read back.
/// </summary>
public abstract class SubscriptionApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static readonly TestApiKey Designer = TestApiKey.ForTenant("acme", "acme-designer", "designer");
    private static readonly TestApiKey Application = TestApiKey.ForTenant("acme", "acme-app", "application");
    private static readonly TestApiKey Operator = TestApiKey.ForTenant("acme", "acme-operator", "operator");
    private static readonly TestApiKey OtherTenant = TestApiKey.ForTenant("globex", "globex-admin", "admin");

    protected override Dictionary<string, string?> Settings => new(
        TestApiKey.Settings(Designer, Application, Operator, OtherTenant).Append(new("Events:AllowHttpEndpoints", "false"))
            .Append(new("CallOuts:AllowedPorts:0", "443")).Append(new("CallOuts:AllowPrivateNetworks", "false")));

    private static readonly string[] Letters = ["c", "a", "e", "b", "d"];

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private HttpClient With(TestApiKey key)
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        Own(new Disposing(client));
        return client;
    }

    private static object Request(string name, string endpoint = "https://receiver.example.com/hooks", string[]? events = null,
        string[]? definitions = null, bool? enabled = null, int? maxEventsPerBatch = null) =>
        new { name, endpoint, events = events ?? ["instance.completed", "task.created"], definitions, enabled, maxEventsPerBatch };

    private static async Task<SubscriptionWithSecretView> CreateAsync(HttpClient http, object request)
    {
        using var response = await http.PostAsJsonAsync("/subscriptions", request, WorkflowServiceFactory.Json, Token);
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync(Token));
        var created = (await response.Content.ReadFromJsonAsync<SubscriptionWithSecretView>(WorkflowServiceFactory.Json, Token))!;
        Assert.Equal($"/subscriptions/{created.Subscription.Id}", response.Headers.Location?.OriginalString);
        return created;
    }

    private static async Task<T> ReadAsync<T>(HttpResponseMessage response, HttpStatusCode expected = HttpStatusCode.OK)
    {
        Assert.True(response.StatusCode == expected, $"{response.StatusCode}: {await response.Content.ReadAsStringAsync(Token)}");
        return (await response.Content.ReadFromJsonAsync<T>(WorkflowServiceFactory.Json, Token))!;
    }

    [Fact]
    public async Task A_designer_creates_reads_changes_pauses_resumes_rotates_and_deletes_a_subscription()
    {
        var http = With(Designer);
        var name = Definitions.Unique("claims-hooks");
        var created = await CreateAsync(http, Request(name, definitions: ["claims"], maxEventsPerBatch: 20));
        Assert.StartsWith("whsec_", created.Secret, StringComparison.Ordinal);
        Assert.Equal(24, Convert.FromBase64String(created.Secret["whsec_".Length..]).Length);
        var view = created.Subscription;
        Assert.Equal((name, "https://receiver.example.com/hooks", "active", 1), (view.Name, view.Endpoint, view.Status, view.Version));
        Assert.Equal(["instance.completed", "task.created"], view.Events);
        Assert.Equal(["claims"], view.Definitions);
        Assert.Equal(20, view.MaxEventsPerBatch);

        // Read back: the same, and no secret anywhere in it.
        using (var read = await http.GetAsync($"/subscriptions/{view.Id}", Token))
        {
            var text = await read.Content.ReadAsStringAsync(Token);
            Assert.Equal(HttpStatusCode.OK, read.StatusCode);
            Assert.DoesNotContain(created.Secret["whsec_".Length..], text, StringComparison.Ordinal);
            Assert.DoesNotContain("secret\"", text, StringComparison.OrdinalIgnoreCase);
        }

        var changed = await ReadAsync<SubscriptionView>(await http.PutAsJsonAsync($"/subscriptions/{view.Id}",
            Request(name + "-v2", "https://receiver.example.com/v2", ["*"]), WorkflowServiceFactory.Json, Token));
        Assert.Equal((name + "-v2", "https://receiver.example.com/v2", 2), (changed.Name, changed.Endpoint, changed.Version));
        Assert.Equal(["*"], changed.Events);
        Assert.Empty(changed.Definitions);
        Assert.Equal(1, changed.MaxEventsPerBatch);

        var paused = await ReadAsync<SubscriptionView>(await http.PostAsJsonAsync($"/subscriptions/{view.Id}/pause",
            new { reason = "receiver maintenance" }, WorkflowServiceFactory.Json, Token));
        Assert.Equal(("paused", "paused by acme-designer: receiver maintenance"), (paused.Status, paused.PausedReason));
        var resumed = await ReadAsync<SubscriptionView>(await http.PostAsync($"/subscriptions/{view.Id}/resume", null, Token));
        Assert.Equal(("active", (string?)null), (resumed.Status, resumed.PausedReason));

        var before = DateTime.UtcNow;
        var rotated = await ReadAsync<SubscriptionWithSecretView>(await http.PostAsJsonAsync($"/subscriptions/{view.Id}/secret",
            new { overlapSeconds = 3600 }, WorkflowServiceFactory.Json, Token));
        Assert.StartsWith("whsec_", rotated.Secret, StringComparison.Ordinal);
        Assert.NotEqual(created.Secret, rotated.Secret);
        Assert.InRange(rotated.Subscription.PreviousSecretExpiresAt!.Value, before.AddMinutes(59), DateTime.UtcNow.AddMinutes(61));

        using (var deleted = await http.DeleteAsync($"/subscriptions/{view.Id}", Token))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }

        using var gone = await http.GetAsync($"/subscriptions/{view.Id}", Token);
        var problem = await ApiClient.ProblemAsync(gone, HttpStatusCode.NotFound);
        Assert.Equal($"No subscription {view.Id} exists.", (string?)problem["detail"]);
    }

    [Fact]
    public async Task A_subscription_that_is_not_valid_is_told_at_its_json_paths_and_nothing_is_written()
    {
        var http = With(Designer);
        var name = Definitions.Unique("invalid");
        var cases = new (object Body, string Path, string Message)[]
        {
            (Request(name, "ftp://receiver.example.com/x"), "$.endpoint",
                "$.endpoint: an absolute https URL is expected, such as https://example.com/hooks/workflow"),
            (Request(name, "/relative"), "$.endpoint", "$.endpoint: an absolute https URL is expected, such as https://example.com/hooks/workflow"),
            (Request(name, "http://receiver.example.com/x"), "$.endpoint", "$.endpoint: the endpoint must use https (Events:AllowHttpEndpoints is off)"),
            (Request(name, "https://receiver.example.com:8443/x"), "$.endpoint",
                "$.endpoint: calls to receiver.example.com on port 8443 are refused: the port is not allowed (CallOuts:AllowedPorts)"),
            (Request(name, "https://10.1.2.3/x"), "$.endpoint",
                "$.endpoint: calls to 10.1.2.3 are refused: private addresses are not allowed (CallOuts:AllowPrivateNetworks / CallOuts:AllowedNetworks)"),
            (Request(name, "https://user:pw@receiver.example.com/x"), "$.endpoint",
                "$.endpoint: the endpoint may not carry a user name or password; the signature authenticates each delivery"),
            (Request(name, events: ["instance.completed", "instance.finished"]), "$.events[1]",
                "$.events[1]: 'instance.finished' is not an event the service sends; its events are instance.started, instance.completed, "
                + "instance.failed, instance.faulted, instance.cancelled, instance.terminated, instance.suspended, instance.resumed, "
                + "instance.migrated, task.created, task.claimed, task.completed, signal.deadLettered"),
            (Request(name, events: ["9lives"]), "$.events[0]",
                "$.events[0]: an event type starts with a letter and has only letters, digits, '.', '-' and '_'"),
            (Request(name, events: []), "$.events",
                "$.events: at least one event type is required: instance.started, instance.completed, instance.failed, instance.faulted, "
                + "instance.cancelled, instance.terminated, instance.suspended, instance.resumed, instance.migrated, task.created, "
                + "task.claimed, task.completed, signal.deadLettered, a custom event's type, or '*' for every event"),
            (Request(" " + name), "$.name", "$.name: a name of 1 to 100 characters, without spaces around it, is required"),
            (Request(name, maxEventsPerBatch: 0), "$.maxEventsPerBatch",
                "$.maxEventsPerBatch: a whole number from 1 (each event posted alone, the default) to 100 (Events:MaxEventsPerBatch) is expected"),
            (Request(name, maxEventsPerBatch: 101), "$.maxEventsPerBatch",
                "$.maxEventsPerBatch: a whole number from 1 (each event posted alone, the default) to 100 (Events:MaxEventsPerBatch) is expected"),
        };

        foreach (var (body, path, message) in cases)
        {
            using var response = await http.PostAsJsonAsync("/subscriptions", body, WorkflowServiceFactory.Json, Token);
            var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
            Assert.Equal(message, (string?)problem["errors"]![path]![0]);
            Assert.DoesNotContain("WorkflowService.", problem.ToJsonString(), StringComparison.Ordinal);
        }

        var list = await ReadAsync<PageView<SubscriptionView>>(await http.GetAsync("/subscriptions?limit=500", Token));
        Assert.DoesNotContain(list.Items, s => s.Name.Contains(name, StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_second_subscription_of_the_same_name_is_a_conflict_and_a_custom_event_type_is_accepted()
    {
        var http = With(Designer);
        var name = Definitions.Unique("twice");
        var first = await CreateAsync(http, Request(name, events: ["claim.approved", "instance.failed"]));
        Assert.Equal(["claim.approved", "instance.failed"], first.Subscription.Events);
        using var again = await http.PostAsJsonAsync("/subscriptions", Request(name), WorkflowServiceFactory.Json, Token);
        var problem = await ApiClient.ProblemAsync(again, HttpStatusCode.Conflict);
        Assert.Equal($"The tenant already has a subscription named '{name}'.", (string?)problem["detail"]);

        var paused = await CreateAsync(http, Request(name + "-paused", enabled: false));
        Assert.Equal(("paused", "created paused"), (paused.Subscription.Status, paused.Subscription.PausedReason));
    }

    [Fact]
    public async Task Applications_and_operators_may_not_manage_subscriptions()
    {
        foreach (var key in new[] { Application, Operator })
        {
            var http = With(key);
            using var create = await http.PostAsJsonAsync("/subscriptions", Request(Definitions.Unique("no")), WorkflowServiceFactory.Json, Token);
            Assert.Equal(HttpStatusCode.Forbidden, create.StatusCode);
            using var list = await http.GetAsync("/subscriptions", Token);
            Assert.Equal(HttpStatusCode.Forbidden, list.StatusCode);
        }
    }

    [Fact]
    public async Task Another_tenants_subscription_answers_as_an_unknown_one_and_stays_as_it_was()
    {
        var acme = With(Designer);
        var globex = With(OtherTenant);
        var mine = (await CreateAsync(acme, Request(Definitions.Unique("mine")))).Subscription;
        var id = mine.Id;

        var attempts = new (HttpMethod Method, string Path)[]
        {
            (HttpMethod.Get, $"/subscriptions/{id}"),
            (HttpMethod.Put, $"/subscriptions/{id}"),
            (HttpMethod.Post, $"/subscriptions/{id}/pause"),
            (HttpMethod.Post, $"/subscriptions/{id}/resume"),
            (HttpMethod.Post, $"/subscriptions/{id}/secret"),
            (HttpMethod.Delete, $"/subscriptions/{id}"),
        };
        foreach (var (method, path) in attempts)
        {
            using var request = new HttpRequestMessage(method, path);
            if (method == HttpMethod.Put)
            {
                request.Content = JsonContent.Create(Request("taken-over"), options: WorkflowServiceFactory.Json);
            }

            using var response = await globex.SendAsync(request, Token);
            var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
            Assert.Equal($"No subscription {id} exists.", (string?)problem["detail"]);
        }

        var globexList = await ReadAsync<PageView<SubscriptionView>>(await globex.GetAsync("/subscriptions?limit=500", Token));
        Assert.DoesNotContain(globexList.Items, s => s.Id == id);
        var after = await ReadAsync<SubscriptionView>(await acme.GetAsync($"/subscriptions/{id}", Token));
        Assert.Equal((mine.Name, mine.Version, "active"), (after.Name, after.Version, after.Status));
    }

    [Fact]
    public async Task The_list_pages_by_name_and_refuses_a_cursor_of_another_list()
    {
        var http = With(Designer);
        var prefix = Definitions.Unique("paged");
        var names = Letters.Select(n => $"{prefix}-{n}").ToList();
        foreach (var name in names)
        {
            await CreateAsync(http, Request(name));
        }

        var all = new List<string>();
        string? after = null;
        do
        {
            var page = await ReadAsync<PageView<SubscriptionView>>(await http.GetAsync(
                "/subscriptions?limit=2" + (after is null ? "" : $"&after={after}"), Token));
            Assert.True(page.Items.Count <= 2);
            all.AddRange(page.Items.Select(s => s.Name));
            after = page.Next;
        }
        while (after is not null);

        Assert.Equal(names.Order(StringComparer.Ordinal), all.Where(n => n.StartsWith(prefix, StringComparison.Ordinal)));
        using var wrong = await http.GetAsync("/subscriptions?after=djox", Token);
        var problem = await ApiClient.ProblemAsync(wrong, HttpStatusCode.BadRequest);
        Assert.Equal("after must be the next of a page of this list, as the service returned it", (string?)problem["detail"]);
    }

    private sealed class Disposing(IDisposable inner) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            inner.Dispose();
            return ValueTask.CompletedTask;
        }
    }
}

public sealed class SqliteSubscriptionApiTests : SubscriptionApiTests<SqliteBackend>;

public sealed class PostgresSubscriptionApiTests : SubscriptionApiTests<PostgresBackend>;

public sealed class MongoDbSubscriptionApiTests : SubscriptionApiTests<MongoDbBackend>;
