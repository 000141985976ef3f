using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Tests.Infrastructure;
using static WorkflowService.Tests.Console.ConsoleForms;

namespace WorkflowService.Tests.Console;

/// <summary>
/// Schedules in the console: the same registry calls, words, roles and tenant walls as the API; a bad form comes back
/// as typed, with the API's words beside each field it is about.
/// </summary>
public sealed partial class ConsoleHttpTests
{
    private const string ScheduleList = "/console/schedules";

    [Fact]
    public async Task A_designer_creates_changes_pauses_resumes_triggers_backfills_and_deletes_a_schedule_in_the_console()
    {
        var definition = await PublishForSchedulesAsync(AcmeDesigner);
        using var browser = Browser();
        await SignInAsync(browser, AcmeDesigner.Key);
        var api = ApiAs(AcmeDesigner);
        var name = Definitions.Unique("hourly");

        using (var created = await SubmitAsync(browser, ScheduleList, ScheduleList,
            ScheduleForm(name, definition, intervalSeconds: "3600", input: """{"region": "emea"}""")))
        {
            Assert.Equal(HttpStatusCode.Redirect, created.StatusCode);
        }

        var schedule = Assert.Single(await api.EveryPageAsync<ScheduleView>("/schedules"), s => s.Name == name);
        Assert.Equal((3600L, "emea"), (schedule.IntervalSeconds, schedule.Input?.GetProperty("region").GetString()));
        var page = $"/console/schedules/{schedule.Id}";
        var list = await browser.GetStringAsync(ScheduleList, Cancel);
        Assert.Contains($"data-schedule=\"{schedule.Id}\"", list, StringComparison.Ordinal);
        Assert.Contains($"href=\"{page}\"", list, StringComparison.Ordinal);
        var detail = await browser.GetStringAsync($"{page}?done=schedule-created", Cancel);
        Assert.Contains("Schedule created.", detail, StringComparison.Ordinal);
        Assert.All(schedule.NextFireTimes, at => Assert.Contains(at.ToString("yyyy-MM-dd HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture), detail,
            StringComparison.Ordinal));

        using (var changed = await SubmitAsync(browser, page, page, ScheduleForm(name, definition, cron: "30 2 * * *", timeZone: "Europe/Berlin")))
        {
            Assert.Equal(HttpStatusCode.Redirect, changed.StatusCode);
            Assert.Equal($"{page}?done=schedule-changed", changed.Headers.Location!.OriginalString);
        }

        var afterChange = await GetScheduleAsync(api, schedule.Id);
        Assert.Equal(("30 2 * * *", "Europe/Berlin", (long?)null), (afterChange.Cron, afterChange.TimeZone, afterChange.IntervalSeconds));

        await TakeScheduleActionAsync(browser, schedule.Id, "pause", "Pause", "schedule-paused");
        Assert.Equal((ScheduleView.Paused, $"paused by {AcmeDesigner.Name}"), ((await GetScheduleAsync(api, schedule.Id)).Status,
            (await GetScheduleAsync(api, schedule.Id)).PausedReason));
        await TakeScheduleActionAsync(browser, schedule.Id, "resume", "Resume", "schedule-resumed");
        Assert.Equal(ScheduleView.Active, (await GetScheduleAsync(api, schedule.Id)).Status);

        await TakeScheduleActionAsync(browser, schedule.Id, "trigger", "Trigger now", "triggered");
        var triggered = Assert.Single((await GetScheduleAsync(api, schedule.Id)).Recent);
        Assert.Equal("started", triggered.Outcome);
        Assert.Contains($"href=\"/console/instances/{triggered.InstanceId}\"", await browser.GetStringAsync(page, Cancel), StringComparison.Ordinal);

        // 02:30 in Berlin on two January days: 01:30 UTC each, both started while the triggered one is open (AllowAll).
        await TakeScheduleActionAsync(browser, schedule.Id, "backfill", "Backfill", "backfilled",
            [new("from", "2026-01-05T00:00"), new("to", "2026-01-06T23:59:59"), new("overlapPolicy", "AllowAll")]);
        var backfilled = (await GetScheduleAsync(api, schedule.Id)).Recent.Where(a => a.FireTime.Year == 2026 && a.FireTime.Month == 1).ToList();
        Assert.Equal([new DateTime(2026, 1, 6, 1, 30, 0), new DateTime(2026, 1, 5, 1, 30, 0)], backfilled.Select(a => a.FireTime));
        Assert.All(backfilled, a => Assert.Equal("started", a.Outcome));

        await TakeScheduleActionAsync(browser, schedule.Id, "delete", "Delete", "schedule-deleted", location: "/console/schedules?done=schedule-deleted");
        using var gone = await api.Http.GetAsync($"/schedules/{schedule.Id}", Cancel);
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
        using var goneInConsole = await browser.GetAsync(page, Cancel);
        Assert.Equal(HttpStatusCode.NotFound, goneInConsole.StatusCode);
    }

    [Theory]
    [InlineData("cron", "not a cron", "$.cron")]
    [InlineData("timeZone", "Mars/Olympus_Mons", "$.timeZone")]
    [InlineData("definition", "no-such-definition", "$.definition")]
    [InlineData("businessKey", "no-fire-time", "$.businessKey")]
    public async Task Bad_input_in_the_schedule_form_is_told_in_the_APIs_words_beside_its_field_and_nothing_is_written(string field, string value, string path)
    {
        var definition = await PublishForSchedulesAsync(AcmeDesigner);
        using var browser = Browser();
        await SignInAsync(browser, AcmeDesigner.Key);
        var name = Definitions.Unique("bad-schedule");
        var fields = ScheduleForm(name, definition, cron: "0 9 * * *", timeZone: "UTC")
            .Select(f => f.Key == field ? new KeyValuePair<string, string>(field, value) : f).ToArray();
        var body = fields.ToDictionary(f => f.Key, f => (object?)(f.Value.Length == 0 ? null : f.Value));
        using var fromApi = await ApiAs(AcmeDesigner).Http.PostAsJsonAsync("/schedules", body, WorkflowServiceFactory.Json, Cancel);
        var problem = await ApiClient.ProblemAsync(fromApi, HttpStatusCode.BadRequest);

        using var fromConsole = await SubmitAsync(browser, ScheduleList, ScheduleList, fields);

        Assert.Equal(HttpStatusCode.BadRequest, fromConsole.StatusCode);
        var page = WebUtility.HtmlDecode(await fromConsole.Content.ReadAsStringAsync(Cancel));
        Assert.Contains((string)problem["detail"]!, page, StringComparison.Ordinal);
        var message = ((string)problem["detail"]!)[(path.Length + 2)..];
        Assert.Contains($"<p class=\"error-text\" id=\"new-{field}-problem\" data-problem-for=\"new-{field}\">{message}</p>", page, StringComparison.Ordinal);
        Assert.Contains("aria-invalid=\"true\"", page, StringComparison.Ordinal);
        Assert.Contains($"value=\"{value}\"", page, StringComparison.Ordinal);
        Assert.DoesNotContain(await ApiAs(AcmeDesigner).EveryPageAsync<ScheduleView>("/schedules"), s => s.Name == name);
    }

    [Theory]
    [InlineData("intervalSeconds", "hourly", "intervalSeconds must be a whole number (it is 'hourly')")]
    [InlineData("startAt", "next monday", "startAt 'next monday' is not a date and time in UTC such as 2027-01-01T02:30")]
    [InlineData("input", "{\"region\": ", "input is not JSON (line ")]
    [InlineData("overlapPolicy", "Sometimes", "overlapPolicy must be one of Skip, BufferOne, AllowAll, CancelPrevious (it is 'Sometimes')")]
    public async Task A_schedule_field_that_is_not_of_its_kind_is_told_beside_it_at_its_JSON_path(string field, string value, string message)
    {
        var definition = await PublishForSchedulesAsync(AcmeDesigner);
        using var browser = Browser();
        await SignInAsync(browser, AcmeDesigner.Key);
        var name = Definitions.Unique("unreadable");
        var fields = ScheduleForm(name, definition, intervalSeconds: "3600").Where(f => f.Key != field).Append(new(field, value)).ToArray();

        using var response = await SubmitAsync(browser, ScheduleList, ScheduleList, fields);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        var page = WebUtility.HtmlDecode(await response.Content.ReadAsStringAsync(Cancel));
        Assert.Contains($"$.{field}: {message}", page, StringComparison.Ordinal);
        Assert.Contains($"data-problem-for=\"new-{field}\">{message}", page, StringComparison.Ordinal);
        Assert.DoesNotContain(await ApiAs(AcmeDesigner).EveryPageAsync<ScheduleView>("/schedules"), s => s.Name == name);
    }

    [Fact]
    public async Task A_backfill_range_that_is_not_one_is_told_at_its_fields_and_starts_nothing()
    {
        var schedule = await CreateScheduleThroughApiAsync(AcmeDesigner, Definitions.Unique("ranged"));
        using var browser = Browser();
        await SignInAsync(browser, AcmeDesigner.Key);
        var page = $"/console/schedules/{schedule.Id}";

        using var unreadable = await SubmitAsync(browser, page, $"{page}/confirm", [new("action", "backfill"), new("from", "yesterday"), new("to", "")]);
        var unreadablePage = WebUtility.HtmlDecode(await unreadable.Content.ReadAsStringAsync(Cancel));
        Assert.Equal(HttpStatusCode.BadRequest, unreadable.StatusCode);
        Assert.Contains("data-problem-for=\"backfill-from\">from 'yesterday' is not a date and time in UTC such as 2027-01-01T02:30</p>", unreadablePage,
            StringComparison.Ordinal);
        Assert.Contains("data-problem-for=\"backfill-to\">to is required: a date and time in UTC such as 2027-01-01T02:30</p>", unreadablePage,
            StringComparison.Ordinal);

        using var backwards = await SubmitAsync(browser, page, $"{page}/backfill", [new("from", "2026-02-01T00:00"), new("to", "2026-01-01T00:00")]);
        Assert.Equal(HttpStatusCode.BadRequest, backwards.StatusCode);
        Assert.Contains("data-problem-for=\"backfill-to\">to (2026-01-01T00:00:00.0000000Z) must not be before from (2026-02-01T00:00:00.0000000Z)</p>",
            WebUtility.HtmlDecode(await backwards.Content.ReadAsStringAsync(Cancel)), StringComparison.Ordinal);
        Assert.Empty((await GetScheduleAsync(ApiAs(AcmeDesigner), schedule.Id)).Recent);
    }

    [Fact]
    public async Task A_caller_without_schedules_manage_sees_no_link_and_is_refused_the_pages_and_forms()
    {
        var schedule = await CreateScheduleThroughApiAsync(Designer, Definitions.Unique("hidden-schedule"));
        using var browser = Browser();
        await SignInAsync(browser, Application.Key);
        Assert.DoesNotContain("href=\"/console/schedules\"", await browser.GetStringAsync("/console/tasks", Cancel), StringComparison.Ordinal);

        foreach (var path in new[] { ScheduleList, $"/console/schedules/{schedule.Id}" })
        {
            using var page = await browser.GetAsync(path, Cancel);
            Assert.True(page.StatusCode == HttpStatusCode.Forbidden, $"{path}: {(int)page.StatusCode}");
        }

        foreach (var action in new[] { "", "/confirm", "/pause", "/trigger", "/delete" })
        {
            using var taken = await SubmitAsync(browser, "/console/tasks", $"/console/schedules/{schedule.Id}{action}",
                [new("action", "pause"), .. ScheduleForm("sneaky", schedule.Definition, intervalSeconds: "60")]);
            Assert.True(taken.StatusCode == HttpStatusCode.Forbidden, $"{action}: {(int)taken.StatusCode}");
        }

        using var created = await SubmitAsync(browser, "/console/tasks", ScheduleList, ScheduleForm(Definitions.Unique("sneaky"), schedule.Definition, intervalSeconds: "60"));
        Assert.Equal(HttpStatusCode.Forbidden, created.StatusCode);
        var still = await GetScheduleAsync(ApiAs(Designer), schedule.Id);
        Assert.Equal((schedule.Name, ScheduleView.Active, 1), (still.Name, still.Status, still.Revision));
        Assert.Empty(still.Recent);
    }

    [Fact]
    public async Task Another_tenants_designer_sees_none_of_a_tenants_schedules_and_cannot_touch_them()
    {
        var acme = await CreateScheduleThroughApiAsync(AcmeDesigner, Definitions.Unique("acme-nightly"));
        using var browser = Browser();
        await SignInAsync(browser, GlobexDesigner.Key);

        Assert.DoesNotContain(acme.Name, await browser.GetStringAsync(ScheduleList, Cancel), StringComparison.Ordinal);
        using (var page = await browser.GetAsync($"/console/schedules/{acme.Id}", Cancel))
        {
            Assert.Equal(HttpStatusCode.NotFound, page.StatusCode);
        }

        foreach (var action in new[] { "confirm", "pause", "trigger", "delete" })
        {
            using var taken = await SubmitAsync(browser, ScheduleList, $"/console/schedules/{acme.Id}/{action}", [new("action", "pause")]);
            Assert.True(taken.StatusCode == HttpStatusCode.NotFound, $"{action}: {(int)taken.StatusCode}");
        }

        using var changed = await SubmitAsync(browser, ScheduleList, $"/console/schedules/{acme.Id}", ScheduleForm("taken", acme.Definition, intervalSeconds: "60"));
        Assert.Equal(HttpStatusCode.NotFound, changed.StatusCode);
        var still = await GetScheduleAsync(ApiAs(AcmeDesigner), acme.Id);
        Assert.Equal((acme.Name, ScheduleView.Active, 1), (still.Name, still.Status, still.Revision));
        Assert.Empty(still.Recent);
    }

    private static KeyValuePair<string, string>[] ScheduleForm(string name, string definition, string cron = "", string timeZone = "",
        string intervalSeconds = "", string input = "") =>
        [new("name", name), new("definition", definition), new("version", ""), new("input", input), new("cron", cron), new("timeZone", timeZone),
            new("intervalSeconds", intervalSeconds), new("startAt", ""), new("endAt", ""), new("jitterSeconds", ""), new("businessKey", ""),
            new("overlapPolicy", "Skip"), new("catchUpPolicy", "Skip"), new("catchUpWindowSeconds", "")];

    /// <summary>Confirms then takes <paramref name="action"/>, expecting a redirect to the schedule's page saying <paramref name="done"/>.</summary>
    private static async Task TakeScheduleActionAsync(HttpClient browser, Guid id, string action, string button, string done,
        KeyValuePair<string, string>[]? fields = null, string? location = null)
    {
        var page = $"/console/schedules/{id}";
        using var confirm = await SubmitAsync(browser, page, $"{page}/confirm", [new("action", action), .. fields ?? []]);
        var confirmation = await confirm.Content.ReadAsStringAsync(Cancel);
        Assert.True(confirm.StatusCode == HttpStatusCode.OK, $"{action}: {(int)confirm.StatusCode} {confirmation}");
        Assert.Contains($">{button}</button>", confirmation, StringComparison.Ordinal);
        using var taken = await browser.PostAsync($"{page}/{action}",
            new FormUrlEncodedContent([new("__antiforgery", Token(confirmation)), .. fields ?? []]), Cancel);
        Assert.True(taken.StatusCode == HttpStatusCode.Redirect, $"{action}: {(int)taken.StatusCode} {await taken.Content.ReadAsStringAsync(Cancel)}");
        Assert.Equal(location ?? $"{page}?done={done}", taken.Headers.Location!.OriginalString);
    }

    private async Task<string> PublishForSchedulesAsync(TestApiKey key)
    {
        var definition = Definitions.Unique("scheduled");
        await ApiAs(key).PublishAsync(Definitions.SignalRoundtrip(definition));
        return definition;
    }

    private async Task<ScheduleView> CreateScheduleThroughApiAsync(TestApiKey key, string name)
    {
        var definition = await PublishForSchedulesAsync(key);
        using var response = await ApiAs(key).Http.PostAsJsonAsync("/schedules", new { name, definition, intervalSeconds = 3600 }, WorkflowServiceFactory.Json, Cancel);
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync(Cancel));
        return (await response.Content.ReadFromJsonAsync<ScheduleView>(WorkflowServiceFactory.Json, Cancel))!;
    }

    private static async Task<ScheduleView> GetScheduleAsync(ApiClient api, Guid id) =>
        (await api.Http.GetFromJsonAsync<ScheduleView>($"/schedules/{id}", WorkflowServiceFactory.Json, Cancel))!;
}
