using System.Net.Http.Json;
using System.Text.RegularExpressions;
using Deque.AxeCore.Commons;
using Deque.AxeCore.Playwright;
using Microsoft.Playwright;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Infrastructure;
using static Microsoft.Playwright.Assertions;

namespace WorkflowService.Tests.Console;

/// <summary>
/// The operations console in a real browser (Debian's Chromium through Playwright) against a real node: sign in, find an
/// instance, see where it waits on the diagram, act on it, watch it change, and every page free of console errors.
/// </summary>
[Collection(nameof(ConsoleBrowserTests))]
public sealed class ConsoleBrowserTests(ConsoleBrowser browser) : IClassFixture<ConsoleBrowser>
{
    private const string Claim = "insurance-claim";

    private ApiClient Api => browser.Api;

    [Fact]
    public async Task An_operator_finds_an_instance_sees_its_waits_on_the_diagram_sends_signals_and_watches_it_complete()
    {
        await EnsureClaimDefinitionAsync();
        var businessKey = $"CLM-{Guid.NewGuid():N}"[..12];
        var instance = await Api.StartAsync(Claim, new { amount = 3200 }, businessKey);
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GetByLabel("Business key").FillAsync(businessKey);
        await page.GetByRole(AriaRole.Button, new() { Name = "Filter" }).ClickAsync();
        await page.GetByRole(AriaRole.Link, new() { Name = instance.Id.ToString() }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Waiting");
        // Both parallel branches wait, each at its own step, and the diagram marks both as current.
        await Expect(page.Locator("svg g[data-step='wait-assessor-report']")).ToHaveAttributeAsync("data-state", "current");
        await Expect(page.Locator("svg g[data-step='wait-police-report']")).ToHaveAttributeAsync("data-state", "current");
        await Expect(page.Locator("svg g[data-step='register']")).ToHaveAttributeAsync("data-state", "completed");

        await SendSignalAsync(page, "assessor-report", """{"damage": 1800}""");
        // (The notice "Signal sent." may already have given way to the redraw's "Updated: …": the ledger is what stays.)
        await Expect(page.Locator("tr[data-signal]", new() { HasText = "assessor-report" })).ToHaveCountAsync(1);
        await SendSignalAsync(page, "police-report", """{"atFault": "other"}""");

        // The page follows the instance to its end: the badge, the diagram and the history redraw as it commits.
        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Completed");
        await Expect(page.Locator("svg g[data-step='settle']")).ToHaveAttributeAsync("data-state", "completed");
        await Expect(page.Locator("ol.timeline")).ToContainTextAsync("InstanceCompleted");
        // An ended instance takes no more actions: the redraw took them away.
        await Expect(page.GetByRole(AriaRole.Button, new() { Name = "Terminate…" })).ToHaveCountAsync(0);
        await Expect(page.GetByRole(AriaRole.Button, new() { Name = "Send signal…" })).ToHaveCountAsync(0);
        await Expect(page.Locator("tr[data-signal-status='Handled']", new() { HasText = "assessor-report" })).ToHaveCountAsync(1);
        await Expect(page.Locator("tr[data-signal-status='Handled']", new() { HasText = "police-report" })).ToHaveCountAsync(1);
        Assert.Equal(InstanceStatus.Completed, (await Api.GetAsync(instance.Id)).Status);
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task An_open_instance_page_redraws_when_the_instance_commits_without_a_reload()
    {
        await EnsureClaimDefinitionAsync();
        var instance = await Api.StartAsync(Claim, new { amount = 900 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);
        await page.GotoAsync($"/console/instances/{instance.Id}");
        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Waiting");
        // A mark on this document: a reload would lose it.
        await page.EvaluateAsync("() => { window.notReloaded = true; }");

        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 700 });
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });

        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Completed");
        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Completed");
        Assert.True(await page.EvaluateAsync<bool>("() => window.notReloaded === true"));
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_parent_and_its_child_workflow_link_to_each_other_and_the_parent_follows_the_child_to_its_end()
    {
        var child = Definitions.Unique("kyc-check");
        var parent = Definitions.Unique("onboarding");
        await Api.PublishAsync(Definitions.SignalRoundtrip(child));
        await Api.PublishAsync($$"""
            {
              "name": "{{parent}}",
              "steps": [
                { "id": "check-identity", "type": "subWorkflow", "definition": "{{child}}", "output": "kyc" },
                { "id": "done", "type": "complete", "result": "vars.kyc.status" }
              ]
            }
            """);
        var started = await Api.StartAsync(parent);
        await Api.WaitForAsync(started.Id, InstanceStatus.Waiting);
        // The parent waits as soon as it has asked for its child; the child starts from that request, a moment later.
        async Task<IReadOnlyList<WorkflowService.Api.InstanceSummaryView>> ChildrenAsync() =>
            (await Api.Http.GetFromJsonAsync<WorkflowService.Api.PageView<WorkflowService.Api.InstanceSummaryView>>(
                $"/instances?definition={child}", WorkflowServiceFactory.Json))!.Items;
        await Eventually.WaitUntilAsync(async () => (await ChildrenAsync()).Count == 1);
        var childId = Assert.Single(await ChildrenAsync()).Id;
        await Api.WaitForAsync(childId, InstanceStatus.Waiting);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GotoAsync($"/console/instances/{started.Id}");
        await page.GetByRole(AriaRole.Link, new() { Name = childId.ToString() }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync(child);
        await page.GetByRole(AriaRole.Link, new() { Name = started.Id.ToString() }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync(parent);

        await Api.SignalAsync(childId, "go", new { value = 1 });

        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Completed");
        await Expect(page.Locator("[data-live-region='children']")).ToContainTextAsync("Completed");
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_dead_letter_is_replayed_from_the_console_after_a_confirmation()
    {
        var name = Definitions.Unique("faulty");
        await Api.PublishAsync(Definitions.FaultsAfterGo(name));
        var instance = await Api.StartAsync(name);
        var signal = await Api.SignalAsync(instance.Id, "go");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GetByRole(AriaRole.Link, new() { Name = "Dead letters" }).ClickAsync();
        var row = page.Locator($"tr[data-signal='{signal.Id}']");
        await Expect(row).ToContainTextAsync("noSuchFunction");
        await row.GetByRole(AriaRole.Button, new() { Name = "Replay…" }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Replay a dead letter" })).ToBeVisibleAsync();
        await page.GetByRole(AriaRole.Button, new() { Name = "Replay", Exact = true }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Dead letter replayed");
        await Eventually.WaitUntilAsync(async () => (await Api.HistoryAsync(instance.Id)).Any(h => h.Type == "InstanceReplayed"));
        var replayed = (await Api.HistoryAsync(instance.Id)).First(h => h.Type == "InstanceReplayed");
        Assert.Equal("test-client", replayed.Actor);
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_task_is_claimed_and_completed_from_the_task_list_and_its_instance_goes_on()
    {
        var name = Definitions.Unique("approval");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "approve", "type": "humanTask", "title": "Approve the refund {{name}}", "output": "approval" },
                { "id": "done", "type": "complete", "result": "vars.approval" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GetByRole(AriaRole.Link, new() { Name = "Tasks", Exact = true }).ClickAsync();
        var row = page.Locator("tr", new() { HasText = $"Approve the refund {name}" });
        await row.GetByRole(AriaRole.Button, new() { Name = "Claim…" }).ClickAsync();
        await page.GetByRole(AriaRole.Button, new() { Name = "Claim", Exact = true }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Task claimed.");
        await Expect(row).ToContainTextAsync("test-client");

        await row.GetByLabel($"Result of Approve the refund {name} (JSON)").FillAsync("""{"approved": true}""");
        await row.GetByRole(AriaRole.Button, new() { Name = "Complete…" }).ClickAsync();
        await Expect(page.Locator("dl.facts")).ToContainTextAsync("\"approved\": true");
        await page.GetByRole(AriaRole.Button, new() { Name = "Complete", Exact = true }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Task completed.");
        var completed = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Contains("approved", completed.Output?.GetRawText() ?? "", StringComparison.Ordinal);
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_person_signs_in_at_the_issuer_the_API_trusts_and_sees_what_their_roles_allow()
    {
        browser.Issuer.SignInAs(ConsoleBrowser.ClientId, "dana.operator", "operator");
        await using var console = await browser.OpenAsync();
        var page = console.Page;

        await page.GotoAsync("/console/definitions");
        await page.GetByRole(AriaRole.Link, new() { Name = "Sign in with your organisation's account" }).ClickAsync();

        // Back from the issuer, signed in, on the page asked for: the API's bearer authentication took the access token.
        await Expect(page).ToHaveURLAsync(new Regex("/console/definitions$"));
        await Expect(page.Locator("header .who")).ToContainTextAsync("dana.operator");
        await Expect(page.GetByRole(AriaRole.Link, new() { Name = "Dead letters" })).ToBeVisibleAsync();
        // Issue #36: outside Development every console cookie is Secure (the single sign-on's correlation and nonce cookies
        // too, or the way back would have failed), and Chromium keeps them for http://127.0.0.1 and sends them back: the
        // sign-out below posts the form token its cookie pairs with.
        var cookies = (await console.Context.CookiesAsync()).Where(c => c.Name.StartsWith("workflow-console", StringComparison.Ordinal)).ToList();
        Assert.Equal(["workflow-console", "workflow-console-antiforgery"], cookies.Select(c => c.Name).Order());
        Assert.All(cookies, c => Assert.True(c.Secure, $"{c.Name} is not Secure"));
        await page.GetByRole(AriaRole.Button, new() { Name = "Sign out" }).ClickAsync();
        await Expect(page).ToHaveURLAsync(new Regex("/console/sign-in"));
        await page.GotoAsync("/console/instances");
        await Expect(page).ToHaveURLAsync(new Regex("/console/sign-in"));
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_caller_without_the_operator_role_sees_no_operator_actions_and_a_wrong_key_is_refused()
    {
        await EnsureClaimDefinitionAsync();
        var instance = await Api.StartAsync(Claim, new { amount = 100 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        await using var console = await browser.OpenAsync();
        var page = console.Page;

        await console.SignInAsync("not-a-key-of-this-node");
        await Expect(page.GetByRole(AriaRole.Alert)).ToContainTextAsync("not accepted");

        await console.SignInAsync(browser.Application.Key);
        await page.GotoAsync($"/console/instances/{instance.Id}");
        await Expect(page.GetByRole(AriaRole.Button, new() { Name = "Send signal…" })).ToBeVisibleAsync();
        await Expect(page.GetByRole(AriaRole.Button, new() { Name = "Terminate…" })).ToHaveCountAsync(0);
        await Expect(page.GetByRole(AriaRole.Button, new() { Name = "Cancel…" })).ToHaveCountAsync(0);
        await Expect(page.GetByRole(AriaRole.Link, new() { Name = "Dead letters" })).ToHaveCountAsync(0);

        Assert.Empty(console.Errors);
        var refused = await page.GotoAsync("/console/dead-letters");
        Assert.Equal(403, refused!.Status);
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Not allowed" })).ToBeVisibleAsync();
    }

    [Fact]
    public async Task A_long_history_and_ledger_are_paged_and_each_page_link_leaves_the_other_list_where_it_was()
    {
        // More signals than a console page lists (Console:PageSize, 25), and four history events for each.
        const int ticks = 27;
        var name = Definitions.Unique("ticks");
        await Api.PublishAsync(Definitions.Ticks(name, ticks));
        var instance = await Api.StartAsync(name);
        await Api.SignalOneAfterAnotherAsync(instance.Id, "tick", ticks);
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        var history = await Api.HistoryAsync(instance.Id);
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);
        await page.GotoAsync($"/console/instances/{instance.Id}");

        var timeline = page.Locator("ol.timeline > li");
        var historyPages = page.GetByRole(AriaRole.Navigation, new() { Name = "History pages" });
        var signalPages = page.GetByRole(AriaRole.Navigation, new() { Name = "Signal pages" });
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = $"History ({history.Count} events)" })).ToBeVisibleAsync();
        await Expect(timeline).ToHaveCountAsync(25);
        await Expect(timeline.First).ToContainTextAsync("InstanceStarted");
        await Expect(page.Locator("tr[data-signal]")).ToHaveCountAsync(25);

        // The ledger's next page: the last two signals; the history stays on its first page.
        await signalPages.GetByRole(AriaRole.Link, new() { Name = "Next page" }).ClickAsync();
        await Expect(page.Locator("tr[data-signal]")).ToHaveCountAsync(ticks - 25);
        await Expect(signalPages.GetByRole(AriaRole.Link, new() { Name = "Next page" })).ToHaveCountAsync(0);
        await Expect(timeline.First).ToContainTextAsync("InstanceStarted");

        // The history's next page goes on where the first ended; its last page ends with the completion.
        await historyPages.GetByRole(AriaRole.Link, new() { Name = "Next page" }).ClickAsync();
        await Expect(timeline.First).ToContainTextAsync(history[25].Type);
        await Expect(timeline).ToHaveCountAsync(25);
        await Expect(page.Locator("tr[data-signal]")).ToHaveCountAsync(ticks - 25);
        await historyPages.GetByRole(AriaRole.Link, new() { Name = "Last page" }).ClickAsync();
        await Expect(timeline.Last).ToContainTextAsync("InstanceCompleted");
        await Expect(timeline).ToHaveCountAsync(25);
        await Expect(historyPages.GetByRole(AriaRole.Link, new() { Name = "Next page" })).ToHaveCountAsync(0);
        await historyPages.GetByRole(AriaRole.Link, new() { Name = "First page" }).ClickAsync();
        await Expect(timeline.First).ToContainTextAsync("InstanceStarted");
        Assert.Empty(console.Errors);

        // A page link the console did not make is refused (the browser reports the 400 as a console error of its own).
        var refused = await page.GotoAsync($"/console/instances/{instance.Id}?history=not-a-cursor");
        Assert.Equal(400, refused!.Status);
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Not a page link" })).ToBeVisibleAsync();
    }

    [Fact]
    public async Task A_subscription_is_created_from_the_console_its_secret_shown_once_and_it_is_listed()
    {
        var name = Definitions.Unique("crm-hooks");
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GetByRole(AriaRole.Link, new() { Name = "Subscriptions" }).ClickAsync();
        await page.GetByLabel("Name", new() { Exact = true }).FillAsync(name);
        await page.GetByLabel("Endpoint (https URL)").FillAsync("https://crm.example.com/hooks/workflow");
        await page.GetByLabel("Events (separated by commas; * for every event)").FillAsync("instance.completed, task.created");
        await page.GetByRole(AriaRole.Button, new() { Name = "Create subscription" }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = $"Signing secret of '{name}'" })).ToBeVisibleAsync();
        await Expect(page.Locator("pre[data-secret]")).ToHaveTextAsync(new Regex("^whsec_"));
        var row = page.Locator("tr[data-subscription]", new() { HasText = name });
        await Expect(row).ToContainTextAsync("instance.completed, task.created");
        await Expect(row).ToContainTextAsync("active");
        await page.GotoAsync("/console/subscriptions");
        await Expect(page.Locator("tr[data-subscription]", new() { HasText = name })).ToHaveCountAsync(1);
        await Expect(page.Locator("pre[data-secret]")).ToHaveCountAsync(0);
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task A_schedule_is_created_from_the_console_triggered_and_its_started_instance_opened()
    {
        var definition = Definitions.Unique("nightly-report");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var name = Definitions.Unique("nightly");
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        await console.SignInAsync(browser.Node.ApiKey);

        await page.GetByRole(AriaRole.Link, new() { Name = "Schedules" }).ClickAsync();
        await page.GetByLabel("Name", new() { Exact = true }).FillAsync(name);
        await page.GetByLabel("Definition", new() { Exact = true }).FillAsync(definition);
        await page.GetByLabel("Cron expression").FillAsync("30 2 * * *");
        await page.GetByLabel("Time zone (IANA, default UTC)").FillAsync("Europe/Berlin");
        await page.GetByLabel("Business key template (default {scheduleName}-{fireTime})").FillAsync("report-{fireTime:yyyyMMddHHmmss}");
        await page.GetByRole(AriaRole.Button, new() { Name = "Create schedule" }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync(name);
        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Schedule created.");
        await Expect(page.Locator("ol[data-next-fire-times] li")).ToHaveCountAsync(5);
        await page.GetByRole(AriaRole.Button, new() { Name = "Trigger now…" }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Trigger a schedule" })).ToBeVisibleAsync();
        await page.GetByRole(AriaRole.Button, new() { Name = "Trigger now", Exact = true }).ClickAsync();

        await Expect(page.GetByRole(AriaRole.Status)).ToContainTextAsync("Occurrence triggered");
        var started = page.Locator("tr[data-schedule-action='started']");
        await Expect(started).ToHaveCountAsync(1);
        await Expect(started).ToContainTextAsync("report-");
        await started.GetByRole(AriaRole.Link).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Level = 1 })).ToContainTextAsync("Waiting");
        await Expect(page.Locator("dl.facts")).ToContainTextAsync("report-");
        var instances = await Api.EveryPageAsync<WorkflowService.Api.InstanceSummaryView>($"/instances?definition={definition}");
        Assert.Contains(Assert.Single(instances).Id.ToString(), page.Url, StringComparison.Ordinal);
        Assert.Empty(console.Errors);
    }

    [Fact]
    public async Task Every_page_renders_without_console_errors_or_serious_accessibility_violations()
    {
        var seed = await SeedTourAsync();
        await using var console = await browser.OpenAsync();
        var page = console.Page;
        var shots = Environment.GetEnvironmentVariable(ConsoleBrowser.ScreenshotsVariable);

        await page.GotoAsync("/console");
        await VisitAsync(page, shots, "sign-in", "Sign in to the workflow console");
        await console.SignInAsync(browser.Node.ApiKey);
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Instances" })).ToBeVisibleAsync();
        await VisitAsync(page, shots, "instances", "Instances");
        await page.GotoAsync($"/console/instances/{seed.Waiting}");
        await VisitAsync(page, shots, "instance-waiting", "History");
        await page.GotoAsync($"/console/instances/{seed.Completed}");
        await VisitAsync(page, shots, "instance-completed", "History");
        await page.GotoAsync($"/console/instances/{seed.Faulted}");
        await VisitAsync(page, shots, "instance-faulted", "History");
        await page.GotoAsync($"/console/instances/{seed.Waiting}");
        await page.GetByLabel("Name", new() { Exact = true }).FillAsync("assessor-report");
        await page.GetByLabel("Payload (JSON, optional)").FillAsync("""{"damage": 2400}""");
        await page.GetByRole(AriaRole.Button, new() { Name = "Send signal…" }).ClickAsync();
        await VisitAsync(page, shots, "confirm-signal", "Send a signal");
        await page.GotoAsync($"/console/instances/{seed.Waiting}");
        await page.GetByRole(AriaRole.Button, new() { Name = "Plan migration…" }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Dry-run plan" })).ToBeVisibleAsync();
        await VisitAsync(page, shots, "confirm-migration", "Migrate an instance");
        await page.GotoAsync("/console/definitions");
        await VisitAsync(page, shots, "definitions", "Definitions");
        await page.GotoAsync($"/console/definitions/{Claim}?version=2&compare=1");
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Differences: v1 → v2" })).ToBeVisibleAsync();
        await VisitAsync(page, shots, "definition-diff", "JSON");
        await page.GotoAsync("/console/tasks");
        await VisitAsync(page, shots, "tasks", "Tasks");
        await page.GotoAsync("/console/dead-letters");
        await VisitAsync(page, shots, "dead-letters", "Dead letters");
        var subscription = await SubscribeAsync(Definitions.Unique("tour-hooks"));
        await page.GotoAsync("/console/subscriptions");
        await VisitAsync(page, shots, "subscriptions", "Subscriptions");
        await page.GotoAsync($"/console/subscriptions/{subscription}");
        await VisitAsync(page, shots, "subscription", "Change");
        await page.GetByRole(AriaRole.Button, new() { Name = "Rotate secret…" }).ClickAsync();
        await VisitAsync(page, shots, "confirm-rotate", "Rotate a secret");
        await page.GotoAsync($"/console/subscriptions/{subscription}/deliveries");
        await VisitAsync(page, shots, "deliveries", "Delivery log");
        var schedule = await ScheduleAsync(Definitions.Unique("tour-nightly"));
        await page.GotoAsync("/console/schedules");
        await VisitAsync(page, shots, "schedules", "Schedules");
        await page.GotoAsync($"/console/schedules/{schedule}");
        await VisitAsync(page, shots, "schedule", "Recent actions");
        await page.GetByRole(AriaRole.Button, new() { Name = "Trigger now…" }).ClickAsync();
        await VisitAsync(page, shots, "confirm-trigger", "Trigger a schedule");

        Assert.Empty(console.Errors);
    }

    private static async Task SendSignalAsync(IPage page, string name, string payload)
    {
        await page.GetByLabel("Name", new() { Exact = true }).FillAsync(name);
        await page.GetByLabel("Payload (JSON, optional)").FillAsync(payload);
        await page.GetByRole(AriaRole.Button, new() { Name = "Send signal…" }).ClickAsync();
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = "Send a signal" })).ToBeVisibleAsync();
        await Expect(page.Locator("dl.facts")).ToContainTextAsync(name);
        await page.GetByRole(AriaRole.Button, new() { Name = "Send signal", Exact = true }).ClickAsync();
        await Expect(page).ToHaveURLAsync(new Regex("/console/instances/[0-9a-f-]+\\?done=signal"));
    }

    /// <summary>Checks the page with axe-core (serious and critical findings fail it), then saves its screenshot when asked to.</summary>
    private static readonly string[] CompletedOnly = ["instance.completed"];

    /// <summary>A subscription made through the API, to an endpoint nothing is sent to (no definition of its name runs).</summary>
    private async Task<Guid> SubscribeAsync(string name)
    {
        using var response = await Api.Http.PostAsJsonAsync("/subscriptions",
            new { name, endpoint = "https://receiver.example.com/hooks", events = CompletedOnly, definitions = new[] { name } }, WorkflowServiceFactory.Json);
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync());
        return (await response.Content.ReadFromJsonAsync<WorkflowService.Api.SubscriptionWithSecretView>(WorkflowServiceFactory.Json))!.Subscription.Id;
    }

    /// <summary>A schedule of the claim definition made through the API, at 02:30 in Berlin (it does not fire within a test).</summary>
    private async Task<Guid> ScheduleAsync(string name)
    {
        using var response = await Api.Http.PostAsJsonAsync("/schedules",
            new { name, definition = Claim, cron = "30 2 * * *", timeZone = "Europe/Berlin", input = new { amount = 100 } }, WorkflowServiceFactory.Json);
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync());
        return (await response.Content.ReadFromJsonAsync<WorkflowService.Api.ScheduleView>(WorkflowServiceFactory.Json))!.Id;
    }

    private static async Task VisitAsync(IPage page, string? shots, string name, string heading)
    {
        // The page is there when its heading is (a form's answer is a navigation the click does not wait for).
        await Expect(page.GetByRole(AriaRole.Heading, new() { Name = heading }).First).ToBeVisibleAsync();
        await page.WaitForLoadStateAsync(LoadState.Load);
        var axe = await page.RunAxe(new AxeRunOptions { RunOnly = new RunOnlyOptions { Type = "tag", Values = ["wcag2a", "wcag2aa", "wcag21aa"] } });
        var serious = axe.Violations.Where(v => v.Impact is "serious" or "critical")
            .Select(v => $"{name}: {v.Id} ({v.Impact}) {v.Help}: {string.Join(" | ", v.Nodes.Take(3).Select(n => n.Html))}").ToList();
        Assert.True(serious.Count == 0, string.Join("\n", serious));
        if (!string.IsNullOrEmpty(shots))
        {
            Directory.CreateDirectory(shots);
            await page.ScreenshotAsync(new PageScreenshotOptions { Path = Path.Combine(shots, $"{name}.png"), FullPage = true });
        }
    }

    private async Task EnsureClaimDefinitionAsync()
    {
        using var existing = await Api.Http.GetAsync($"/definitions/{Claim}");
        if (!existing.IsSuccessStatusCode)
        {
            await Api.PublishExampleAsync("insurance-claim.json");
        }
    }

    private sealed record Tour(Guid Waiting, Guid Completed, Guid Faulted);

    /// <summary>What the tour shows: the claim in two versions, claims waiting, done and at a task, a dead letter.</summary>
    private async Task<Tour> SeedTourAsync()
    {
        await EnsureClaimDefinitionAsync();
        if ((await Api.EveryPageAsync<WorkflowService.Api.DefinitionView>($"/definitions/{Claim}")).All(v => v.Version != 2))
        {
            var v2 = (await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "insurance-claim.json")))
                .Replace("\"autoApproveLimit\": 5000", "\"autoApproveLimit\": 7500", StringComparison.Ordinal)
                .Replace("\"P10D\"", "\"P7D\"", StringComparison.Ordinal);
            await Api.PublishAsync(v2);
        }

        var waiting = await Api.StartAsync(Claim, new { amount = 2400 }, $"CLM-{Random.Shared.Next(10_000, 99_999)}", version: 1);
        var completed = await Api.StartAsync(Claim, new { amount = 1200 }, $"CLM-{Random.Shared.Next(10_000, 99_999)}");
        var review = await Api.StartAsync(Claim, new { amount = 18_000 }, $"CLM-{Random.Shared.Next(10_000, 99_999)}");
        await Api.WaitForAsync(completed.Id, InstanceStatus.Waiting);
        await Api.SignalAsync(completed.Id, "assessor-report", new { damage = 1200 });
        await Api.SignalAsync(completed.Id, "police-report", new { atFault = "other" });
        await Api.WaitForAsync(review.Id, InstanceStatus.Waiting);
        await Api.SignalAsync(review.Id, "assessor-report", new { damage = 18_000 });
        await Api.SignalAsync(review.Id, "police-report", new { atFault = "insured" });
        await Api.WaitForAsync(completed.Id, InstanceStatus.Completed);

        var faulty = Definitions.Unique("payout");
        await Api.PublishAsync($$"""
            {
              "name": "{{faulty}}",
              "description": "Pays a settled claim out through the ledger.",
              "steps": [
                { "id": "await-settlement", "type": "waitForSignal", "signal": "settled", "output": "settlement" },
                { "id": "book-payment", "type": "assign", "set": { "booking": "ledger.book(vars.settlement)" } },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var refund = Definitions.Unique("refund");
        await Api.PublishAsync($$"""
            {
              "name": "{{refund}}",
              "description": "A refund of a premium, approved by anyone on the desk.",
              "steps": [
                { "id": "approve", "type": "humanTask", "title": "Approve the premium refund", "data": "input", "output": "approval" },
                { "id": "done", "type": "complete", "result": "vars.approval" }
              ]
            }
            """);
        await Api.StartAsync(refund, new { policy = "POL-2231", amount = 84 });
        var payout = await Api.StartAsync(faulty, new { claim = "CLM-1001" });
        await Api.SignalAsync(payout.Id, "settled", new { amount = 1200 });
        await Api.WaitForAsync(payout.Id, InstanceStatus.Faulted);
        await Api.WaitForAsync(waiting.Id, InstanceStatus.Waiting);
        return new Tour(waiting.Id, completed.Id, payout.Id);
    }
}
