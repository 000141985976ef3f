using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Schedules;

/// <summary>
/// Schedules through the real pipeline and authentication handlers: designers manage them, in their tenant only; bad
/// requests are told in the JSON the client sent and write nothing; trigger and backfill start each occurrence once, as the overlap policy decides.
/// </summary>
public abstract class ScheduleApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static readonly TestApiKey Designer = TestApiKey.ForTenant("acme", "acme-designer", "designer");
    private static readonly TestApiKey Admin = TestApiKey.ForTenant("acme", "acme-admin", "admin");
    private static readonly TestApiKey Application = TestApiKey.ForTenant("acme", "acme-app", "application");
    private static readonly TestApiKey Operator = TestApiKey.ForTenant("acme", "acme-operator", "operator");
    private static readonly TestApiKey OtherTenant = TestApiKey.ForTenant("globex", "globex-admin", "admin");

    protected override Dictionary<string, string?> Settings => TestApiKey.Settings(Designer, Admin, Application, Operator, OtherTenant);

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static object Request(string name, string definition, string? cron = "0 9 * * MON-FRI", string? timeZone = "Europe/Berlin",
        long? intervalSeconds = null, DateTime? startAt = null, DateTime? endAt = null, string? businessKey = null) =>
        new { name, definition, input = new { region = "emea" }, cron, timeZone, intervalSeconds, startAt, endAt, businessKey };

    private static async Task<T> ReadAsync<T>(HttpResponseMessage response, HttpStatusCode expected = HttpStatusCode.OK)
    {
        Assert.True(response.StatusCode == expected, $"{response.StatusCode}: {await response.Content.ReadAsStringAsync(Token)}");
        return (await response.Content.ReadFromJsonAsync<T>(WorkflowServiceFactory.Json, Token))!;
    }

    /// <summary>A definition published in acme, and a schedule of it created by a designer.</summary>
    private async Task<(ApiClient Http, string Definition, ScheduleView Schedule)> CreateAsync(object? request = null, string prefix = "nightly")
    {
        var admin = WithApiKey(Admin);
        var definition = Definitions.Unique("sched-def");
        await admin.PublishAsync(Definitions.SignalRoundtrip(definition));
        var http = WithApiKey(Designer);
        var schedule = await ReadAsync<ScheduleView>(await http.Http.PostAsJsonAsync("/schedules",
            request ?? Request(Definitions.Unique(prefix), definition), WorkflowServiceFactory.Json, Token), HttpStatusCode.Created);
        return (http, definition, schedule);
    }

    [Fact]
    public async Task A_designer_creates_reads_lists_changes_pauses_resumes_and_deletes_a_schedule()
    {
        var (http, definition, created) = await CreateAsync();
        Assert.Equal(("active", "Europe/Berlin", 1), (created.Status, created.TimeZone, created.Revision));
        Assert.Equal(5, created.NextFireTimes.Count);
        // Weekdays at 09:00 in Berlin: 07:00 or 08:00 UTC, never on a weekend.
        Assert.All(created.NextFireTimes, t => Assert.True(t.Hour is 7 or 8 && t.DayOfWeek is not (DayOfWeek.Saturday or DayOfWeek.Sunday), $"{t:O}"));
        Assert.Equal(created.Name, (await ReadAsync<ScheduleView>(await http.Http.GetAsync($"/schedules/{created.Id}", Token))).Name);

        var listed = await http.EveryPageAsync<ScheduleView>("/schedules?limit=1");
        Assert.Contains(listed, s => s.Id == created.Id && s.NextFireTimes.Count == 5);

        var changed = await ReadAsync<ScheduleView>(await http.Http.PutAsJsonAsync($"/schedules/{created.Id}",
            Request(created.Name, definition, cron: null, timeZone: null, intervalSeconds: 3600), WorkflowServiceFactory.Json, Token));
        Assert.Equal(((long?)3600, (string?)null, 2), (changed.IntervalSeconds, changed.Cron, changed.Revision));
        Assert.Equal(TimeSpan.FromHours(1), changed.NextFireTimes[1] - changed.NextFireTimes[0]);

        var paused = await ReadAsync<ScheduleView>(await http.Http.PostAsJsonAsync($"/schedules/{created.Id}/pause", new { reason = "holidays" },
            WorkflowServiceFactory.Json, Token));
        Assert.Equal(("paused", "paused by acme-designer: holidays"), (paused.Status, paused.PausedReason));
        Assert.Empty(paused.NextFireTimes);
        var resumed = await ReadAsync<ScheduleView>(await http.Http.PostAsync($"/schedules/{created.Id}/resume", null, Token));
        Assert.Equal(("active", 5), (resumed.Status, resumed.NextFireTimes.Count));

        using (var deleted = await http.Http.DeleteAsync($"/schedules/{created.Id}", Token))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }

        using var gone = await http.Http.GetAsync($"/schedules/{created.Id}", Token);
        Assert.Equal($"No schedule {created.Id} exists.", (string?)(await ApiClient.ProblemAsync(gone, HttpStatusCode.NotFound))["detail"]);
    }

    [Theory]
    [InlineData("""{ "cron": "61 * * * *" }""", "$.cron", "cron '61 * * * *' is not a cron expression")]
    [InlineData("""{ "cron": "0 9 * * *", "timeZone": "Europe/Atlantis" }""", "$.timeZone", "timeZone 'Europe/Atlantis' is not a known time zone")]
    [InlineData("""{ "intervalSeconds": 60, "startAt": "2027-02-01T00:00:00Z", "endAt": "2027-01-01T00:00:00Z" }""", "$.endAt", "must be after startAt")]
    [InlineData("""{ "cron": "0 9 * * *", "intervalSeconds": 60 }""", "$.cron", "give either cron")]
    [InlineData("""{ "intervalSeconds": 60, "businessKey": "nightly" }""", "$.businessKey", "must hold {fireTime}")]
    [InlineData("""{ "intervalSeconds": 60, "definition": "no-such-definition" }""", "$.definition", "no definition 'no-such-definition' is published")]
    public async Task A_schedule_that_cannot_run_is_refused_with_the_field_and_why(string fields, string path, string message)
    {
        var (http, definition, _) = await CreateAsync();
        var body = System.Text.Json.Nodes.JsonNode.Parse(fields)!.AsObject();
        body["name"] ??= Definitions.Unique("bad");
        body["definition"] ??= definition;
        using var response = await http.Http.PostAsJsonAsync("/schedules", body, WorkflowServiceFactory.Json, Token);
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        var errors = problem["errors"]![path]!.AsArray().Select(e => (string)e!).ToList();
        Assert.Contains(errors, e => e.Contains(message, StringComparison.Ordinal));
        Assert.DoesNotContain("Exception", problem.ToJsonString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Another_tenants_schedule_answers_as_an_unknown_one_and_is_not_listed()
    {
        var (_, _, created) = await CreateAsync();
        var globex = WithApiKey(OtherTenant);
        foreach (var (method, path) in new[]
                 {
                     (HttpMethod.Get, ""), (HttpMethod.Delete, ""), (HttpMethod.Post, "/pause"), (HttpMethod.Post, "/resume"), (HttpMethod.Post, "/trigger"),
                 })
        {
            using var request = new HttpRequestMessage(method, $"/schedules/{created.Id}{path}");
            using var response = await globex.Http.SendAsync(request, Token);
            Assert.Equal($"No schedule {created.Id} exists.", (string?)(await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound))["detail"]);
        }

        Assert.DoesNotContain(await globex.EveryPageAsync<ScheduleView>("/schedules"), s => s.Id == created.Id);
    }

    [Fact]
    public async Task Only_designers_and_admins_manage_schedules()
    {
        var (_, _, created) = await CreateAsync();
        foreach (var key in new[] { Application, Operator })
        {
            using var list = await WithApiKey(key).Http.GetAsync("/schedules", Token);
            Assert.Equal(HttpStatusCode.Forbidden, list.StatusCode);
            using var trigger = await WithApiKey(key).Http.PostAsync($"/schedules/{created.Id}/trigger", null, Token);
            Assert.Equal(HttpStatusCode.Forbidden, trigger.StatusCode);
        }

        using var client = Factory.CreateClient();
        using var anonymous = await client.GetAsync("/schedules", Token);
        Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        using var admin = await WithApiKey(Admin).Http.GetAsync($"/schedules/{created.Id}", Token);
        Assert.Equal(HttpStatusCode.OK, admin.StatusCode);
    }

    [Fact]
    public async Task Trigger_now_starts_an_occurrence_with_its_business_key_even_while_paused()
    {
        var (http, definition, created) = await CreateAsync();
        await http.Http.PostAsync($"/schedules/{created.Id}/pause", null, Token);
        var fired = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsync($"/schedules/{created.Id}/trigger", null, Token));
        var action = Assert.Single(fired.Actions);
        Assert.Equal("started", action.Outcome);
        Assert.Equal($"{created.Name}-{action.FireTime:yyyyMMdd'T'HHmmss'Z'}", action.Detail);
        Assert.Equal(action.InstanceId, fired.Schedule.LastInstanceId);
        Assert.Equal(action, fired.Schedule.Recent[0]);

        // The instance is addressed by the business key the template made, with the schedule's input.
        var byKey = await ReadAsync<InstanceView>(await WithApiKey(Admin).Http.GetAsync($"/definitions/{definition}/instances/{action.Detail}", Token));
        Assert.Equal((action.InstanceId, "emea", "schedule:" + created.Name), (byKey.Id, byKey.Input!.Value.GetProperty("region").GetString(), byKey.StartedBy));
    }

    [Fact]
    public async Task A_backfill_starts_each_occurrence_of_the_range_once_however_often_it_is_asked()
    {
        var (http, definition, _) = await CreateAsync();
        var name = Definitions.Unique("hourly");
        var start = new DateTime(2026, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        var schedule = await ReadAsync<ScheduleView>(await http.Http.PostAsJsonAsync("/schedules",
            Request(name, definition, cron: null, timeZone: null, intervalSeconds: 3600, startAt: start, businessKey: "{scheduleName}:{fireTime:yyyyMMddHH}"),
            WorkflowServiceFactory.Json, Token), HttpStatusCode.Created);
        var range = new { from = start.AddHours(1), to = start.AddHours(4), overlapPolicy = "AllowAll" };

        var first = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill", range, WorkflowServiceFactory.Json, Token));
        Assert.Equal([start.AddHours(1), start.AddHours(2), start.AddHours(3), start.AddHours(4)], first.Actions.Select(a => a.FireTime));
        Assert.All(first.Actions, a => Assert.Equal("started", a.Outcome));
        Assert.Equal($"{name}:2026010101", first.Actions[0].Detail);

        var again = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill", range, WorkflowServiceFactory.Json, Token));
        Assert.All(again.Actions, a => Assert.Equal("alreadyStarted", a.Outcome));
        Assert.Equal(first.Actions.Select(a => a.InstanceId), again.Actions.Select(a => a.InstanceId));

        using var backwards = await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill", new { from = range.to, to = range.from },
            WorkflowServiceFactory.Json, Token);
        Assert.Contains("must not be before from", (await ApiClient.ProblemAsync(backwards, HttpStatusCode.BadRequest)).ToJsonString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Trigger_and_backfill_follow_the_overlap_policy_and_find_what_they_started_when_asked_again()
    {
        var (http, definition, _) = await CreateAsync();
        var start = new DateTime(2026, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        var schedule = await ReadAsync<ScheduleView>(await http.Http.PostAsJsonAsync("/schedules",
            Request(Definitions.Unique("skipping"), definition, cron: null, timeZone: null, intervalSeconds: 3600, startAt: start),
            WorkflowServiceFactory.Json, Token), HttpStatusCode.Created);
        var range = new { from = start.AddHours(1), to = start.AddHours(3) };

        // Skip (the schedule's): the first starts and stays open, so the others are skipped.
        var first = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill", range, WorkflowServiceFactory.Json, Token));
        Assert.Equal(["started", "skipped", "skipped"], first.Actions.Select(a => a.Outcome));
        var again = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill", range, WorkflowServiceFactory.Json, Token));
        Assert.Equal(["alreadyStarted", "skipped", "skipped"], again.Actions.Select(a => a.Outcome));
        Assert.Equal(first.Actions[0].InstanceId, again.Actions[0].InstanceId);
        var triggered = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsync($"/schedules/{schedule.Id}/trigger", null, Token));
        Assert.Equal("skipped", Assert.Single(triggered.Actions).Outcome);

        // A request may name another policy.
        var allowed = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/backfill",
            new { range.from, range.to, overlapPolicy = "AllowAll" }, WorkflowServiceFactory.Json, Token));
        Assert.Equal(["alreadyStarted", "started", "started"], allowed.Actions.Select(a => a.Outcome));
        var forced = await ReadAsync<ScheduleFiringView>(await http.Http.PostAsJsonAsync($"/schedules/{schedule.Id}/trigger",
            new { overlapPolicy = "AllowAll" }, WorkflowServiceFactory.Json, Token));
        Assert.Equal("started", Assert.Single(forced.Actions).Outcome);
        Assert.Equal(forced.Actions[0].InstanceId, forced.Schedule.LastInstanceId);
    }
}

public sealed class SqliteScheduleApiTests : ScheduleApiTests<SqliteBackend>;

public sealed class PostgresScheduleApiTests : ScheduleApiTests<PostgresBackend>;

public sealed class MongoDbScheduleApiTests : ScheduleApiTests<MongoDbBackend>;
