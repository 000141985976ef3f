using System.Net;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Mvc.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using static WorkflowService.Tests.Console.ConsoleForms;

namespace WorkflowService.Tests.Console;

/// <summary>
/// The console's sign-in and forms through the real pipeline, without a browser: what it refuses matters as much as what
/// it shows (no action without the form's antiforgery token, no session outside /console, no redirect off the site).
/// </summary>
public sealed partial class ConsoleHttpTests : SharedServiceTest<SqliteBackend>
{
    private static readonly TestApiKey Operator = TestApiKey.Create("night-shift", "operator", "application", "designer");
    private static readonly TestApiKey Application = TestApiKey.Create("claims-app", "application");
    private static readonly TestApiKey Designer = TestApiKey.Create("modeler", "designer");
    private static readonly TestApiKey NoServiceRole = TestApiKey.Create("clerk", "underwriter");

    /// <summary>A credential longer than one browser cookie holds once protected (as a token with many group claims is).</summary>
    private static readonly TestApiKey LongKey = TestApiKey.Create("integration", "operator") with
    {
        Key = string.Concat(Enumerable.Range(0, 120).Select(_ => Guid.NewGuid().ToString("N"))),
    };

    protected override Dictionary<string, string?> Settings => new(
        TestApiKey.Settings(Operator, Application, Designer, NoServiceRole, LongKey, AcmeDesigner, GlobexDesigner).Concat(DeliverySettings));

    /// <summary>Each console page answers as the API endpoint it stands for would: shown to the roles that may read it, 403 to the others.</summary>
    [Theory]
    [InlineData("/console/instances", "application,operator")]
    [InlineData("/console/instances/{id}", "application,operator")]
    [InlineData("/console/definitions", "application,designer,operator")]
    [InlineData("/console/definitions/{name}", "application,designer,operator")]
    [InlineData("/console/dead-letters", "operator")]
    [InlineData("/console/tasks", "application,designer,operator,none")]
    [InlineData("/console/subscriptions", "designer,operator")]
    [InlineData("/console/schedules", "designer,operator")]
    public async Task Each_page_is_shown_to_the_roles_of_its_API_endpoint_and_refused_to_the_others(string page, string allowed)
    {
        var instance = await StartWaitingAsync();
        var definition = (await OperatorApi().GetAsync(instance)).Definition;
        var path = page.Replace("{id}", instance.ToString(), StringComparison.Ordinal).Replace("{name}", definition, StringComparison.Ordinal);
        foreach (var (role, key) in new[] { ("application", Application), ("designer", Designer), ("operator", Operator), ("none", NoServiceRole) })
        {
            using var browser = Browser();
            await SignInAsync(browser, key.Key);

            using var response = await browser.GetAsync(path);

            var expected = allowed.Split(',').Contains(role) ? HttpStatusCode.OK : HttpStatusCode.Forbidden;
            Assert.True(expected == response.StatusCode, $"{role} on {path}: {(int)response.StatusCode}, expected {(int)expected}");
            Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
        }
    }

    [Fact]
    public async Task A_visitor_who_is_not_signed_in_is_sent_to_the_sign_in_page_with_the_way_back()
    {
        using var browser = Browser();

        using var response = await browser.GetAsync("/console/instances?status=Waiting");

        Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
        Assert.Equal("/console/sign-in?returnUrl=%2Fconsole%2Finstances%3Fstatus%3DWaiting", response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task An_action_posted_without_the_forms_antiforgery_token_is_refused_and_changes_nothing()
    {
        var instance = await StartWaitingAsync();
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);

        using var forged = await browser.PostAsync($"/console/instances/{instance}/terminate", new FormUrlEncodedContent([]));

        Assert.Equal(HttpStatusCode.BadRequest, forged.StatusCode);
        Assert.Contains("This form could not be accepted", await forged.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(InstanceStatus.Waiting, (await OperatorApi().GetAsync(instance)).Status);
    }

    [Fact]
    public async Task An_action_with_the_forms_token_is_taken_as_the_signed_in_caller()
    {
        var instance = await StartWaitingAsync();
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);
        var page = await browser.GetStringAsync($"/console/instances/{instance}");

        using var terminated = await browser.PostAsync($"/console/instances/{instance}/terminate",
            new FormUrlEncodedContent([new("__antiforgery", Token(page))]));

        Assert.Equal(HttpStatusCode.Redirect, terminated.StatusCode);
        Assert.Equal($"/console/instances/{instance}?done=terminate", terminated.Headers.Location!.OriginalString);
        Assert.Equal(InstanceStatus.Cancelled, (await OperatorApi().GetAsync(instance)).Status);
        var history = await OperatorApi().HistoryAsync(instance);
        Assert.Contains(history, h => h.Type == "InstanceCancelled" && h.Actor == Operator.Name);
    }

    private static readonly string[] OperatorEvents = ["InstanceSuspended", "InstanceResumed", "InstanceMigrated", "InstanceCancelled"];

    [Fact]
    public async Task Suspend_resume_migrate_and_cancel_are_each_confirmed_then_taken_as_the_API_takes_them()
    {
        var api = OperatorApi();
        var name = Definitions.Unique("console-ops");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        await api.PublishAsync(Definitions.SignalRoundtrip(name).Replace("vars.go.value", "vars.go.value * 2", StringComparison.Ordinal));
        var instance = (await api.StartAsync(name, version: 1)).Id;
        await api.WaitForAsync(instance, InstanceStatus.Waiting);
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);

        async Task TakeAsync(string action, string confirmButton, params KeyValuePair<string, string>[] fields)
        {
            var page = await browser.GetStringAsync($"/console/instances/{instance}");
            using var confirm = await browser.PostAsync($"/console/instances/{instance}/confirm",
                new FormUrlEncodedContent([new("__antiforgery", Token(page)), new("action", action), .. fields]));
            var confirmation = await confirm.Content.ReadAsStringAsync();
            Assert.True(confirm.StatusCode == HttpStatusCode.OK, $"{action}: {(int)confirm.StatusCode}");
            Assert.Contains($">{confirmButton}</button>", confirmation, StringComparison.Ordinal);
            using var taken = await browser.PostAsync($"/console/instances/{instance}/{action}",
                new FormUrlEncodedContent([new("__antiforgery", Token(confirmation)), .. fields]));
            Assert.Equal(HttpStatusCode.Redirect, taken.StatusCode);
            Assert.Equal($"/console/instances/{instance}?done={action}", taken.Headers.Location!.OriginalString);
        }

        await TakeAsync("suspend", "Suspend");
        Assert.Equal(InstanceStatus.Suspended, (await api.GetAsync(instance)).Status);
        await TakeAsync("resume", "Resume");
        await api.WaitForAsync(instance, InstanceStatus.Waiting);
        await TakeAsync("migrate", "Migrate", new KeyValuePair<string, string>("toVersion", "2"));
        Assert.Equal(2, (await api.GetAsync(instance)).Version);
        await TakeAsync("cancel", "Cancel");
        await api.WaitForAsync(instance, InstanceStatus.Cancelled);
        var history = await api.HistoryAsync(instance);
        Assert.All(OperatorEvents, type => Assert.Contains(history, h => h.Type == type && h.Actor == Operator.Name));
    }

    [Fact]
    public async Task The_console_session_is_not_accepted_by_the_API()
    {
        using var browser = Browser();
        var cookie = await SignInAsync(browser, Operator.Key);

        using var request = new HttpRequestMessage(HttpMethod.Get, "/instances");
        request.Headers.Add("Cookie", cookie);
        using var response = await browser.SendAsync(request);

        Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
    }

    [Fact]
    public async Task A_wrong_key_is_not_kept_and_the_visitor_is_asked_to_sign_in_again()
    {
        using var browser = Browser();
        await SignInAsync(browser, "not-a-key-of-this-node");

        using var response = await browser.GetAsync("/console/instances");

        Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
        Assert.StartsWith("/console/sign-in?returnUrl=%2Fconsole%2Finstances&expired=1", response.Headers.Location!.OriginalString, StringComparison.Ordinal);
        Assert.Contains(response.Headers.GetValues("Set-Cookie"), c => c.StartsWith("workflow-console=;", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("https://elsewhere.example/console")]
    [InlineData("//elsewhere.example/console")]
    [InlineData("/definitions")]
    [InlineData("/console-elsewhere")]
    [InlineData("/console/instances\r\nSet-Cookie: planted=1")]
    public async Task A_return_address_outside_the_console_is_not_followed_after_sign_in(string returnUrl)
    {
        using var browser = Browser();
        var form = await browser.GetStringAsync("/console/sign-in");

        using var response = await browser.PostAsync("/console/sign-in", new FormUrlEncodedContent(
            [new("__antiforgery", Token(form)), new("credential", Operator.Key), new("returnUrl", returnUrl)]));

        Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
        Assert.Equal("/console/instances", response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task A_signal_payload_that_is_not_json_is_explained_on_the_confirmation_and_nothing_is_sent()
    {
        var instance = await StartWaitingAsync();
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);
        var page = await browser.GetStringAsync($"/console/instances/{instance}");

        using var confirm = await browser.PostAsync($"/console/instances/{instance}/confirm", new FormUrlEncodedContent(
            [new("__antiforgery", Token(page)), new("action", "signal"), new("signalName", "go"), new("payload", "{approved: yes")]));

        Assert.Equal(HttpStatusCode.BadRequest, confirm.StatusCode);
        var body = await confirm.Content.ReadAsStringAsync();
        Assert.Contains("The payload is not valid JSON", body, StringComparison.Ordinal);
        Assert.DoesNotContain(">Send signal</button>", body, StringComparison.Ordinal);
        Assert.DoesNotContain(await OperatorApi().SignalsAsync(instance), s => s.Name == "go");
    }

    [Fact]
    public async Task A_signal_to_one_forEach_item_is_accepted_by_the_form_as_the_api_accepts_it()
    {
        var instance = await StartWaitingAsync();
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);
        var page = await browser.GetStringAsync($"/console/instances/{instance}");

        using var confirm = await browser.PostAsync($"/console/instances/{instance}/confirm", new FormUrlEncodedContent(
            [new("__antiforgery", Token(page)), new("action", "signal"), new("signalName", "approve#3"), new("payload", "")]));
        var confirmation = await confirm.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.OK, confirm.StatusCode);
        using var sent = await browser.PostAsync($"/console/instances/{instance}/signal", new FormUrlEncodedContent(
            [new("__antiforgery", Token(confirmation)), new("signalName", "approve#3"), new("payload", ""),
                new("idempotencyKey", IdempotencyField().Match(confirmation).Groups[1].Value)]));

        Assert.Equal(HttpStatusCode.Redirect, sent.StatusCode);
        Assert.Single(await OperatorApi().SignalsAsync(instance), s => s.Name == "approve#3");
        using var refused = await browser.PostAsync($"/console/instances/{instance}/confirm", new FormUrlEncodedContent(
            [new("__antiforgery", Token(page)), new("action", "signal"), new("signalName", "approve#x"), new("payload", "")]));
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.Contains("optionally ending in &#x27;#&#x27; and a forEach item", await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_confirmation_sent_twice_sends_its_signal_once()
    {
        var instance = await StartWaitingAsync();
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);
        var page = await browser.GetStringAsync($"/console/instances/{instance}");
        using var confirm = await browser.PostAsync($"/console/instances/{instance}/confirm", new FormUrlEncodedContent(
            [new("__antiforgery", Token(page)), new("action", "signal"), new("signalName", "note"), new("payload", """{"text": "called the customer"}""")]));
        var confirmation = await confirm.Content.ReadAsStringAsync();
        var once = IdempotencyField().Match(confirmation).Groups[1].Value;

        foreach (var _ in Enumerable.Range(0, 2))
        {
            using var sent = await browser.PostAsync($"/console/instances/{instance}/signal", new FormUrlEncodedContent(
                [new("__antiforgery", Token(confirmation)), new("signalName", "note"), new("payload", """{"text": "called the customer"}"""),
                    new("idempotencyKey", once)]));
            Assert.Equal(HttpStatusCode.Redirect, sent.StatusCode);
        }

        Assert.Single(await OperatorApi().SignalsAsync(instance), s => s.Name == "note");
    }

    [Fact]
    public async Task A_sign_out_posted_from_elsewhere_without_the_forms_token_is_refused_and_the_session_stays()
    {
        using var browser = Browser();
        await SignInAsync(browser, Operator.Key);

        using var forged = await browser.PostAsync("/console/sign-out", new FormUrlEncodedContent([]));

        Assert.Equal(HttpStatusCode.BadRequest, forged.StatusCode);
        Assert.False(forged.Headers.TryGetValues("Set-Cookie", out var cookies) && cookies.Any(c => c.StartsWith("workflow-console=;", StringComparison.Ordinal)));
        using var still = await browser.GetAsync("/console/instances");
        Assert.Equal(HttpStatusCode.OK, still.StatusCode);
    }

    /// <summary>
    /// Issue #36: signing out revokes the session in the store, so a copy of its cookie taken before (from a shared
    /// computer, a proxy's log) is refused afterwards, here and on another node on the same database.
    /// </summary>
    [Fact]
    public async Task A_session_cookie_replayed_after_sign_out_is_refused_on_every_node()
    {
        await using var otherNode = new WorkflowServiceFactory(new(Factory.Settings));
        using var browser = Browser();
        var cookie = await SignInAsync(browser, Operator.Key);
        Assert.Equal(HttpStatusCode.OK, await ReplayAsync(Factory, cookie));
        Assert.Equal(HttpStatusCode.OK, await ReplayAsync(otherNode, cookie));

        var page = await browser.GetStringAsync("/console/instances");
        using var signOut = await browser.PostAsync("/console/sign-out", new FormUrlEncodedContent([new("__antiforgery", Token(page))]));
        Assert.Equal(HttpStatusCode.Redirect, signOut.StatusCode);

        Assert.Equal(HttpStatusCode.Redirect, await ReplayAsync(Factory, cookie));
        Assert.Equal(HttpStatusCode.Redirect, await ReplayAsync(otherNode, cookie));
        // Another session of the same key is a session of its own.
        using var again = Browser();
        Assert.Equal(HttpStatusCode.OK, await ReplayAsync(Factory, await SignInAsync(again, Operator.Key)));
    }

    /// <summary>A console page asked for with <paramref name="cookie"/> only, as a copy of it would be sent from elsewhere.</summary>
    private static async Task<HttpStatusCode> ReplayAsync(WorkflowServiceFactory node, string cookie)
    {
        using var client = node.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false, HandleCookies = false });
        using var request = new HttpRequestMessage(HttpMethod.Get, "/console/instances");
        request.Headers.Add("Cookie", cookie);
        using var response = await client.SendAsync(request);
        if (response.StatusCode == HttpStatusCode.Redirect)
        {
            Assert.StartsWith("/console/sign-in?", response.Headers.Location!.OriginalString, StringComparison.Ordinal);
        }

        return response.StatusCode;
    }

    [Fact]
    public async Task A_credential_longer_than_one_cookie_holds_is_kept_in_several()
    {
        Assert.True(LongKey.Key.Length > 3800);
        using var browser = Browser();
        await SignInAsync(browser, LongKey.Key);

        using var response = await browser.GetAsync("/console/instances");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Contains(LongKey.Name, await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    /// <summary>
    /// Issue #36: behind a proxy that ends TLS the node sees plain HTTP. With secure cookies (the default outside
    /// Development) every console cookie is Secure all the same, and the forms, whose antiforgery check would refuse plain
    /// HTTP under ASP.NET Core's Always policy, still work.
    /// </summary>
    [Fact]
    public async Task With_secure_cookies_every_console_cookie_is_secure_even_when_the_node_sees_plain_http()
    {
        var (factory, _) = await StartServiceAsync(new(Settings) { ["Console:SecureCookies"] = "true" });
        using var proxied = factory.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false, HandleCookies = false });
        Assert.Equal("http", proxied.BaseAddress!.Scheme);

        using var form = await proxied.GetAsync("/console/sign-in");
        var formCookie = SecureCookie(form, "workflow-console-antiforgery");
        using var signIn = new HttpRequestMessage(HttpMethod.Post, "/console/sign-in")
        {
            Content = new FormUrlEncodedContent([new("__antiforgery", Token(await form.Content.ReadAsStringAsync())), new("credential", Operator.Key),
                new("returnUrl", "/console/instances")]),
        };
        signIn.Headers.Add("Cookie", formCookie);
        using var signedIn = await proxied.SendAsync(signIn);
        Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
        var session = SecureCookie(signedIn, ConsoleSessionCookieName);

        using var page = new HttpRequestMessage(HttpMethod.Get, "/console/instances");
        page.Headers.Add("Cookie", session);
        using var shown = await proxied.SendAsync(page);
        Assert.Equal(HttpStatusCode.OK, shown.StatusCode);
    }

    private const string ConsoleSessionCookieName = "workflow-console";

    /// <summary>The cookie named <paramref name="name"/> the answer sets (name=value), asserted to be marked Secure.</summary>
    private static string SecureCookie(HttpResponseMessage response, string name)
    {
        var set = Assert.Single(response.Headers.GetValues("Set-Cookie"), c => c.StartsWith(name + "=", StringComparison.Ordinal));
        Assert.Contains("; secure", set, StringComparison.OrdinalIgnoreCase);
        return set.Split(';')[0];
    }

    private HttpClient Browser() => ConsoleForms.Browser(Factory);

    private ApiClient OperatorApi()
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", Operator.Key);
        return new ApiClient(client);
    }

    private async Task<Guid> StartWaitingAsync()
    {
        var api = OperatorApi();
        var name = Definitions.Unique("console");
        await api.PublishAsync($$"""
            { "name": "{{name}}", "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "go" }, { "id": "done", "type": "complete" } ] }
            """);
        var instance = await api.StartAsync(name);
        await api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        return instance.Id;
    }

    [GeneratedRegex("name=\"idempotencyKey\" value=\"([^\"]+)\"")]
    private static partial Regex IdempotencyField();
}
