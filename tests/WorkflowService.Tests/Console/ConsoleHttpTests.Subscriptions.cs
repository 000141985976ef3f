using System.Net;
using System.Net.Http.Json;
using System.Text.RegularExpressions;
using WorkflowService.Api;
using WorkflowService.Engine.Events;
using WorkflowService.Tests.Events;
using WorkflowService.Tests.Infrastructure;
using static WorkflowService.Tests.Console.ConsoleForms;

namespace WorkflowService.Tests.Console;

/// <summary>
/// Event subscriptions and their delivery log in the console: the same registry calls, words, roles and tenant walls as
/// the API, and a secret shown once on the page that made it.
/// </summary>
public sealed partial class ConsoleHttpTests
{
    private static readonly TestApiKey AcmeDesigner = TestApiKey.ForTenant("acme", "acme-modeler", "designer");
    private static readonly TestApiKey GlobexDesigner = TestApiKey.ForTenant("globex", "globex-modeler", "designer");

    /// <summary>Deliveries retried quickly and dead-lettered after a few attempts, so a delivery log fills within a test.</summary>
    private static readonly Dictionary<string, string?> DeliverySettings = new()
    {
        ["Events:FirstRetryDelay"] = "00:00:00.020",
        ["Events:MaxRetryDelay"] = "00:00:00.100",
        ["Events:MaxAttempts"] = "3",
        ["Events:PollInterval"] = "00:00:00.200",
    };

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_designer_creates_lists_changes_pauses_resumes_rotates_and_deletes_a_subscription_in_the_console()
    {
        using var browser = Browser();
        await SignInAsync(browser, Designer.Key);
        var api = ApiAs(Designer);
        var name = Definitions.Unique("crm");

        using var created = await SubmitAsync(browser, ConsolePathOfList, "/console/subscriptions",
            Form(name, "https://receiver.example.com/hooks", "instance.completed, task.created", "claim", "20"));
        var createdPage = await created.Content.ReadAsStringAsync(Cancel);
        Assert.True(created.StatusCode == HttpStatusCode.Created, createdPage);
        var secret = Secret(createdPage);
        // A page that shows a secret is kept in no cache (the antiforgery token on its forms sees to it).
        Assert.True(created.Headers.CacheControl?.NoStore, $"Cache-Control: {created.Headers.CacheControl}");
        var subscription = Assert.Single(await api.EveryPageAsync<SubscriptionView>("/subscriptions"), s => s.Name == name);
        Assert.Equal(["instance.completed", "task.created"], subscription.Events);
        Assert.Equal(["claim"], subscription.Definitions);
        Assert.Equal(20, subscription.MaxEventsPerBatch);
        var id = subscription.Id;
        // The edit form holds the batch size as it is, so a change of something else keeps it.
        Assert.Contains("name=\"maxEventsPerBatch\" type=\"number\" min=\"1\" step=\"1\" inputmode=\"numeric\" value=\"20\"",
            await browser.GetStringAsync($"/console/subscriptions/{id}", Cancel), StringComparison.Ordinal);
        using (var notANumber = await SubmitAsync(browser, $"/console/subscriptions/{id}", $"/console/subscriptions/{id}",
            Form(name, "https://receiver.example.com/v2", "*", "", "twenty")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, notANumber.StatusCode);
            Assert.Contains("$.maxEventsPerBatch: a whole number from 1 (each event posted alone, the default) to 100",
                await notANumber.Content.ReadAsStringAsync(Cancel), StringComparison.Ordinal);
        }

        var list = await browser.GetStringAsync(ConsolePathOfList, Cancel);
        Assert.Contains($"data-subscription=\"{id}\"", list, StringComparison.Ordinal);
        Assert.DoesNotContain(secret, list, StringComparison.Ordinal);

        using (var changed = await SubmitAsync(browser, $"/console/subscriptions/{id}", $"/console/subscriptions/{id}",
            Form(name, "https://receiver.example.com/v2", "*", "", "5")))
        {
            Assert.Equal(HttpStatusCode.Redirect, changed.StatusCode);
            Assert.Equal($"/console/subscriptions/{id}?done=changed", changed.Headers.Location!.OriginalString);
        }

        var afterChange = await GetSubscriptionAsync(api, id);
        Assert.Equal(("https://receiver.example.com/v2", "*"), (afterChange.Endpoint, Assert.Single(afterChange.Events)));
        Assert.Empty(afterChange.Definitions);
        Assert.Equal(5, afterChange.MaxEventsPerBatch);

        await TakeSubscriptionActionAsync(browser, id, "pause", "Pause", HttpStatusCode.Redirect);
        Assert.Equal((SubscriptionView.Paused, $"paused by {Designer.Name}"), ((await GetSubscriptionAsync(api, id)).Status, (await GetSubscriptionAsync(api, id)).PausedReason));
        await TakeSubscriptionActionAsync(browser, id, "resume", "Resume", HttpStatusCode.Redirect);
        Assert.Equal(SubscriptionView.Active, (await GetSubscriptionAsync(api, id)).Status);

        var rotatedPage = await TakeSubscriptionActionAsync(browser, id, "rotate", "Rotate", HttpStatusCode.OK);
        Assert.NotEqual(secret, Secret(rotatedPage));
        Assert.NotNull((await GetSubscriptionAsync(api, id)).PreviousSecretExpiresAt);
        Assert.DoesNotContain(Secret(rotatedPage), await browser.GetStringAsync($"/console/subscriptions/{id}", Cancel), StringComparison.Ordinal);

        await TakeSubscriptionActionAsync(browser, id, "delete", "Delete", HttpStatusCode.Redirect, "/console/subscriptions?done=deleted");
        using var gone = await api.Http.GetAsync($"/subscriptions/{id}", Cancel);
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }

    [Theory]
    [InlineData("ftp://receiver.example.com/hooks", "instance.completed")]
    [InlineData("https://receiver.example.com/hooks", "instance.nope")]
    [InlineData("https://receiver.example.com/hooks", "")]
    public async Task Bad_input_in_the_subscription_form_is_told_in_the_APIs_words_and_nothing_is_written(string endpoint, string events)
    {
        using var browser = Browser();
        await SignInAsync(browser, Designer.Key);
        var name = Definitions.Unique("bad");
        using var fromApi = await ApiAs(Designer).Http.PostAsJsonAsync("/subscriptions",
            new { name, endpoint, events = events.Length == 0 ? Array.Empty<string>() : [events] }, WorkflowServiceFactory.Json, Cancel);
        var problem = await ApiClient.ProblemAsync(fromApi, HttpStatusCode.BadRequest);

        using var fromConsole = await SubmitAsync(browser, ConsolePathOfList, "/console/subscriptions", Form(name, endpoint, events, ""));

        Assert.Equal(HttpStatusCode.BadRequest, fromConsole.StatusCode);
        var page = WebUtility.HtmlDecode(await fromConsole.Content.ReadAsStringAsync(Cancel));
        Assert.Contains((string)problem["detail"]!, page, StringComparison.Ordinal);
        Assert.Contains($"value=\"{endpoint}\"", page, StringComparison.Ordinal);
        Assert.DoesNotContain(await ApiAs(Designer).EveryPageAsync<SubscriptionView>("/subscriptions"), s => s.Name == name);
    }

    [Fact]
    public async Task A_caller_without_subscriptions_manage_sees_no_link_and_is_refused_the_pages_and_forms()
    {
        var subscription = await CreateThroughApiAsync(Designer, Definitions.Unique("hidden"));
        using var designer = Browser();
        await SignInAsync(designer, Designer.Key);
        Assert.Contains("href=\"/console/subscriptions\"", await designer.GetStringAsync("/console/tasks", Cancel), StringComparison.Ordinal);
        using var browser = Browser();
        await SignInAsync(browser, Application.Key);
        var tasks = await browser.GetStringAsync("/console/tasks", Cancel);
        Assert.DoesNotContain("href=\"/console/subscriptions\"", tasks, StringComparison.Ordinal);

        foreach (var path in new[] { "/console/subscriptions", $"/console/subscriptions/{subscription.Id}", $"/console/subscriptions/{subscription.Id}/deliveries" })
        {
            using var page = await browser.GetAsync(path, Cancel);
            Assert.True(page.StatusCode == HttpStatusCode.Forbidden, $"{path}: {(int)page.StatusCode}");
        }

        using var create = await SubmitAsync(browser, "/console/tasks", "/console/subscriptions",
            Form(Definitions.Unique("sneaky"), "https://receiver.example.com/hooks", "*", ""));
        using var pause = await SubmitAsync(browser, "/console/tasks", $"/console/subscriptions/{subscription.Id}/pause", []);
        Assert.Equal((HttpStatusCode.Forbidden, HttpStatusCode.Forbidden), (create.StatusCode, pause.StatusCode));
        Assert.Equal(SubscriptionView.Active, (await GetSubscriptionAsync(ApiAs(Designer), subscription.Id)).Status);
        Assert.Single(await ApiAs(Designer).EveryPageAsync<SubscriptionView>("/subscriptions"), s => s.Id == subscription.Id);
    }

    [Fact]
    public async Task Another_tenants_designer_sees_none_of_a_tenants_subscriptions_and_cannot_touch_them()
    {
        var acme = await CreateThroughApiAsync(AcmeDesigner, Definitions.Unique("acme-crm"));
        using var browser = Browser();
        await SignInAsync(browser, GlobexDesigner.Key);

        var list = await browser.GetStringAsync(ConsolePathOfList, Cancel);
        Assert.DoesNotContain(acme.Name, list, StringComparison.Ordinal);
        foreach (var path in new[] { $"/console/subscriptions/{acme.Id}", $"/console/subscriptions/{acme.Id}/deliveries" })
        {
            using var page = await browser.GetAsync(path, Cancel);
            Assert.True(page.StatusCode == HttpStatusCode.NotFound, $"{path}: {(int)page.StatusCode}");
        }

        foreach (var action in new[] { "confirm", "pause", "rotate", "delete" })
        {
            using var taken = await SubmitAsync(browser, ConsolePathOfList, $"/console/subscriptions/{acme.Id}/{action}", [new("action", "pause")]);
            Assert.True(taken.StatusCode == HttpStatusCode.NotFound, $"{action}: {(int)taken.StatusCode}");
        }

        using var changed = await SubmitAsync(browser, ConsolePathOfList, $"/console/subscriptions/{acme.Id}",
            Form("taken", "https://globex.example.com/hooks", "*", ""));
        Assert.Equal(HttpStatusCode.NotFound, changed.StatusCode);
        var still = await GetSubscriptionAsync(ApiAs(AcmeDesigner), acme.Id);
        Assert.Equal((acme.Name, acme.Endpoint, SubscriptionView.Active), (still.Name, still.Endpoint, still.Status));
    }

    [Fact]
    public async Task A_dead_lettered_delivery_shows_in_the_log_and_is_replayed_from_the_console_after_the_endpoint_is_mended()
    {
        await using var receiver = await EventReceiver.StartAsync();
        var api = OperatorApi();
        var definition = Definitions.Unique("console-hooks");
        await api.PublishAsync(Definitions.SignalRoundtrip(definition));
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);
        var name = Definitions.Unique("failing");
        using (var created = await SubmitAsync(browser, ConsolePathOfList, "/console/subscriptions",
            Form(name, new Uri(receiver.Address, $"/flaky/{definition}/1000").ToString(), EventTypes.InstanceStarted, definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        var id = Assert.Single(await api.EveryPageAsync<SubscriptionView>("/subscriptions"), s => s.Name == name).Id;
        await api.StartAsync(definition);
        await Eventually.WaitUntilAsync(async () => (await api.EveryPageAsync<DeliveryView>($"/subscriptions/{id}/deliveries")) is [{ Status: DeliveryStatus.DeadLettered }],
            what: "a dead-lettered delivery");
        var dead = Assert.Single(await api.EveryPageAsync<DeliveryView>($"/subscriptions/{id}/deliveries"));

        var log = await browser.GetStringAsync($"/console/subscriptions/{id}/deliveries", Cancel);
        var row = DeliveryRow(log, dead.Id);
        Assert.Contains("data-delivery-status=\"DeadLettered\"", row, StringComparison.Ordinal);
        Assert.Contains($"<td>{dead.Attempts}</td>", row, StringComparison.Ordinal);
        Assert.Contains("<td>503</td>", row, StringComparison.Ordinal);
        Assert.Contains(WebUtility.HtmlEncode(dead.LastError!), row, StringComparison.Ordinal);
        Assert.Contains("Replay…", row, StringComparison.Ordinal);

        using (var mended = await SubmitAsync(browser, $"/console/subscriptions/{id}", $"/console/subscriptions/{id}",
            Form(name, new Uri(receiver.Address, $"/ok/{definition}-mended").ToString(), EventTypes.InstanceStarted, definition)))
        {
            Assert.Equal(HttpStatusCode.Redirect, mended.StatusCode);
        }

        using var confirm = await SubmitAsync(browser, $"/console/subscriptions/{id}/deliveries", $"/console/subscriptions/{id}/deliveries/{dead.Id}/confirm", []);
        var confirmation = await confirm.Content.ReadAsStringAsync(Cancel);
        Assert.Contains(">Replay</button>", confirmation, StringComparison.Ordinal);
        using (var replayed = await browser.PostAsync($"/console/subscriptions/{id}/deliveries/{dead.Id}/replay",
            new FormUrlEncodedContent([new("__antiforgery", Token(confirmation))]), Cancel))
        {
            Assert.Equal(HttpStatusCode.Redirect, replayed.StatusCode);
            Assert.Equal($"/console/subscriptions/{id}/deliveries?done=redelivered", replayed.Headers.Location!.OriginalString);
        }

        await Eventually.WaitUntilAsync(() => receiver.Of($"{definition}-mended").Count == 1, what: "the replayed delivery");
        Assert.Equal(dead.Id.ToString(), Assert.Single(receiver.Of($"{definition}-mended")).Id);
        await Eventually.WaitUntilAsync(async () => DeliveryRow(await browser.GetStringAsync($"/console/subscriptions/{id}/deliveries", Cancel), dead.Id)
            .Contains("data-delivery-status=\"Delivered\"", StringComparison.Ordinal), what: "the log to show the delivery delivered");
        Assert.DoesNotContain("Replay…", DeliveryRow(await browser.GetStringAsync($"/console/subscriptions/{id}/deliveries", Cancel), dead.Id),
            StringComparison.Ordinal);
        using var again = await browser.PostAsync($"/console/subscriptions/{id}/deliveries/{dead.Id}/replay",
            new FormUrlEncodedContent([new("__antiforgery", Token(confirmation))]), Cancel);
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
    }

    private static readonly string[] CompletedOnly = ["instance.completed"];

    private const string ConsolePathOfList = "/console/subscriptions";

    private static KeyValuePair<string, string>[] Form(string name, string endpoint, string events, string definitions, string batch = "") =>
        [new("name", name), new("endpoint", endpoint), new("events", events), new("definitions", definitions), new("maxEventsPerBatch", batch)];

    /// <summary>Reads <paramref name="page"/> for a form token, then posts <paramref name="fields"/> to <paramref name="action"/> with it.</summary>
    private static async Task<HttpResponseMessage> SubmitAsync(HttpClient browser, string page, string action, KeyValuePair<string, string>[] fields)
    {
        var form = await browser.GetStringAsync(page, Cancel);
        return await browser.PostAsync(action, new FormUrlEncodedContent([new("__antiforgery", Token(form)), .. fields]), Cancel);
    }

    /// <summary>Confirms then takes <paramref name="action"/>; returns the page the action answered with.</summary>
    private static async Task<string> TakeSubscriptionActionAsync(HttpClient browser, Guid id, string action, string button, HttpStatusCode expected,
        string? location = null)
    {
        using var confirm = await SubmitAsync(browser, $"/console/subscriptions/{id}", $"/console/subscriptions/{id}/confirm", [new("action", action)]);
        var confirmation = await confirm.Content.ReadAsStringAsync(Cancel);
        Assert.True(confirm.StatusCode == HttpStatusCode.OK, $"{action}: {(int)confirm.StatusCode}");
        Assert.Contains($">{button}</button>", confirmation, StringComparison.Ordinal);
        using var taken = await browser.PostAsync($"/console/subscriptions/{id}/{action}",
            new FormUrlEncodedContent([new("__antiforgery", Token(confirmation))]), Cancel);
        Assert.True(taken.StatusCode == expected, $"{action}: {(int)taken.StatusCode}");
        if (expected == HttpStatusCode.Redirect)
        {
            Assert.Equal(location ?? $"/console/subscriptions/{id}?done={(action == "pause" ? "paused" : "resumed")}", taken.Headers.Location!.OriginalString);
        }

        return await taken.Content.ReadAsStringAsync(Cancel);
    }

    private ApiClient ApiAs(TestApiKey key)
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        return new ApiClient(client);
    }

    private static async Task<SubscriptionView> GetSubscriptionAsync(ApiClient api, Guid id) =>
        (await api.Http.GetFromJsonAsync<SubscriptionView>($"/subscriptions/{id}", WorkflowServiceFactory.Json, Cancel))!;

    private async Task<SubscriptionView> CreateThroughApiAsync(TestApiKey key, string name)
    {
        using var response = await ApiAs(key).Http.PostAsJsonAsync("/subscriptions",
            new { name, endpoint = "https://receiver.example.com/hooks", events = CompletedOnly }, WorkflowServiceFactory.Json, Cancel);
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync(Cancel));
        return (await response.Content.ReadFromJsonAsync<SubscriptionWithSecretView>(WorkflowServiceFactory.Json, Cancel))!.Subscription;
    }

    private static string Secret(string page) => SecretBlock().Match(page) is { Success: true } match
        ? match.Groups[1].Value
        : throw new InvalidOperationException("the page shows no secret");

    /// <summary>The log's row of one delivery.</summary>
    private static string DeliveryRow(string page, Guid id) =>
        Regex.Match(page, $"<tr data-delivery=\"{id}\"[\\s\\S]*?</tr>") is { Success: true } row ? row.Value : throw new InvalidOperationException($"no row for {id}");

    [GeneratedRegex("<pre class=\"json\" data-secret>(whsec_[^<]+)</pre>")]
    private static partial Regex SecretBlock();
}
