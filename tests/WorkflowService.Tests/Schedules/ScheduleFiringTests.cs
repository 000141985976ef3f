using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Schedules;

/// <summary>
/// Schedules firing on the store's clock, driven by a fake <see cref="TimeProvider"/>: no test waits for real time to
/// pass. After each move of the clock a test waits for two passes of the node's runner (the second read the new time).
/// </summary>
public abstract class ScheduleFiringTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private readonly FakeTimeProvider _clock = new(DateTimeOffset.UtcNow);

    protected override Dictionary<string, string?> Settings => new()
    {
        ["Workers:PollInterval"] = "00:00:01",
        ["Schedules:PollInterval"] = "00:00:01",
        ["Schedules:LateAfter"] = "00:00:10",
    };

    protected override void ConfigureServices(IServiceCollection services) => services.AddSingleton<TimeProvider>(_clock);

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private DateTime StoreNow => Factory.Get<IStoreClock>().Now().UtcDateTime;

    [Fact]
    public async Task Cron_fires_at_local_times_in_two_zones_across_the_spring_change()
    {
        var definition = await PublishAsync();

        // New York leaves 02:00 EST for 03:00 EDT on 14 March 2027: 01:30 EST, then 02:30 (skipped by the clock) just after the gap, then 03:30 EDT.
        await MoveToAsync(At("2027-03-14T04:00:00Z"));
        var newYork = await CreateAsync(new { name = Definitions.Unique("ny"), definition, cron = "30 1-3 * * *", timeZone = "America/New_York",
            overlapPolicy = "AllowAll", endAt = At("2027-03-14T12:00:00Z") });
        await StepToAsync(At("2027-03-14T09:00:00Z"));
        Assert.Equal([At("2027-03-14T06:30:00Z"), At("2027-03-14T07:00:00Z"), At("2027-03-14T07:30:00Z")], await StartedAsync(newYork));

        // Berlin leaves 02:00 CET for 03:00 CEST on 28 March 2027.
        await MoveToAsync(At("2027-03-27T22:00:00Z"));
        var berlin = await CreateAsync(new { name = Definitions.Unique("berlin"), definition, cron = "30 1-3 * * *", timeZone = "Europe/Berlin",
            overlapPolicy = "AllowAll" });
        await StepToAsync(At("2027-03-28T03:00:00Z"));
        Assert.Equal([At("2027-03-28T00:30:00Z"), At("2027-03-28T01:00:00Z"), At("2027-03-28T01:30:00Z")], await StartedAsync(berlin));
        // Summer time from then on: 01:30 CEST is 23:30 UTC the day before.
        Assert.Equal([At("2027-03-28T23:30:00Z"), At("2027-03-29T00:30:00Z")], (await GetAsync(berlin)).NextFireTimes.Take(2));
    }

    [Fact]
    public async Task Overlap_skip_drops_an_occurrence_while_the_last_instance_is_open()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("Skip");
        await MoveToAsync(t0);
        var first = (await GetAsync(schedule)).LastInstanceId!.Value;
        await MoveToAsync(t0.AddMinutes(1));
        await CompleteAsync(first);
        await MoveToAsync(t0.AddMinutes(2));

        Assert.Equal([(t0, "started"), (t0.AddMinutes(1), "skipped"), (t0.AddMinutes(2), "started")], await ActionsAsync(schedule));
    }

    [Fact]
    public async Task Overlap_buffer_one_starts_the_held_occurrence_when_the_last_instance_ends()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("BufferOne");
        await MoveToAsync(t0);
        var first = (await GetAsync(schedule)).LastInstanceId!.Value;
        await MoveToAsync(t0.AddMinutes(1));
        await MoveToAsync(t0.AddMinutes(2));
        Assert.Equal(t0.AddMinutes(1), (await GetAsync(schedule)).BufferedFireTime);
        await CompleteAsync(first);
        await MoveToAsync(t0.AddMinutes(2).AddSeconds(5));

        Assert.Equal([(t0, "started"), (t0.AddMinutes(1), "buffered"), (t0.AddMinutes(2), "skipped"), (t0.AddMinutes(1), "started")],
            await ActionsAsync(schedule));
        Assert.Null((await GetAsync(schedule)).BufferedFireTime);
    }

    [Fact]
    public async Task Overlap_allow_all_starts_every_occurrence()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("AllowAll");
        await MoveToAsync(t0);
        await MoveToAsync(t0.AddMinutes(1));

        Assert.Equal([(t0, "started"), (t0.AddMinutes(1), "started")], await ActionsAsync(schedule));
        var recent = (await GetAsync(schedule)).Recent;
        Assert.All(recent, a => Assert.NotNull(a.InstanceId));
        Assert.NotEqual(recent[0].InstanceId, recent[1].InstanceId);
    }

    [Fact]
    public async Task Overlap_cancel_previous_cancels_the_open_instance_and_starts_the_new_one()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("CancelPrevious");
        await MoveToAsync(t0);
        var first = (await GetAsync(schedule)).LastInstanceId!.Value;
        await MoveToAsync(t0.AddMinutes(1));

        Assert.Equal(InstanceStatus.Cancelled, (await Api.WaitForAsync(first, InstanceStatus.Cancelled)).Status);
        Assert.Equal([(t0, "started"), (t0.AddMinutes(1), "started")], await ActionsAsync(schedule));
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync((await GetAsync(schedule)).LastInstanceId!.Value)).Status);
    }

    [Fact]
    public async Task Catch_up_skip_runs_nothing_that_was_missed()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("AllowAll", "Skip");
        await MoveToAsync(t0.AddMinutes(9).AddSeconds(30));

        var actions = await ActionsAsync(schedule);
        Assert.DoesNotContain(actions, a => a.Outcome == "started");
        Assert.Contains(actions, a => a.Outcome == "skipped");
        Assert.Equal(t0.AddMinutes(10), (await GetAsync(schedule)).NextFireTimes[0]);
    }

    [Fact]
    public async Task Catch_up_last_runs_only_the_newest_missed_occurrence()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("AllowAll", "Last");
        await MoveToAsync(t0.AddMinutes(9).AddSeconds(30));

        Assert.Equal([t0.AddMinutes(9)], await StartedAsync(schedule));
    }

    [Fact]
    public async Task Catch_up_all_runs_every_missed_occurrence_within_the_window_once()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("AllowAll", "All", catchUpWindowSeconds: 300);
        await MoveToAsync(t0.AddMinutes(9).AddSeconds(30));
        await MoveToAsync(t0.AddMinutes(9).AddSeconds(40));

        Assert.Equal([.. Enumerable.Range(5, 5).Select(m => t0.AddMinutes(m))], await StartedAsync(schedule));
    }

    [Fact]
    public async Task A_paused_schedule_starts_nothing_and_resumes_from_now()
    {
        var (schedule, t0) = await CreateEveryMinuteAsync("AllowAll", "All", catchUpWindowSeconds: 3600);
        using (var paused = await Api.Http.PostAsync($"/schedules/{schedule.Id}/pause", null, Token))
        {
            paused.EnsureSuccessStatusCode();
        }

        await MoveToAsync(t0.AddMinutes(2).AddSeconds(30));
        Assert.Empty(await ActionsAsync(schedule));
        using (var resumed = await Api.Http.PostAsync($"/schedules/{schedule.Id}/resume", null, Token))
        {
            resumed.EnsureSuccessStatusCode();
        }

        Assert.Equal(t0.AddMinutes(3), (await GetAsync(schedule)).NextFireTimes[0]);
        await MoveToAsync(t0.AddMinutes(3));
        Assert.Equal([t0.AddMinutes(3)], await StartedAsync(schedule));
    }

    private static DateTime At(string text) => DateTime.Parse(text, System.Globalization.CultureInfo.InvariantCulture,
        System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal);

    private async Task<string> PublishAsync()
    {
        var definition = Definitions.Unique("sched");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        return definition;
    }

    /// <summary>A schedule every minute from the next whole minute (t0) on the store's clock, of a definition whose instances wait for "go".</summary>
    private async Task<(ScheduleView Schedule, DateTime T0)> CreateEveryMinuteAsync(string overlap, string catchUp = "Skip", long? catchUpWindowSeconds = null)
    {
        var definition = await PublishAsync();
        var now = StoreNow;
        var t0 = new DateTime(now.Ticks - (now.Ticks % TimeSpan.TicksPerMinute), DateTimeKind.Utc).AddMinutes(1);
        var schedule = await CreateAsync(new
        {
            name = Definitions.Unique("every-minute"), definition, intervalSeconds = 60, startAt = t0, overlapPolicy = overlap, catchUpPolicy = catchUp,
            catchUpWindowSeconds,
        });
        return (schedule, t0);
    }

    private async Task<ScheduleView> CreateAsync(object request)
    {
        using var response = await Api.Http.PostAsJsonAsync("/schedules", request, WorkflowServiceFactory.Json, Token);
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync(Token));
        return (await response.Content.ReadFromJsonAsync<ScheduleView>(WorkflowServiceFactory.Json, Token))!;
    }

    private async Task<ScheduleView> GetAsync(ScheduleView schedule) =>
        (await Api.Http.GetFromJsonAsync<ScheduleView>($"/schedules/{schedule.Id}", WorkflowServiceFactory.Json, Token))!;

    /// <summary>What the schedule did, oldest first.</summary>
    private async Task<List<(DateTime FireTime, string Outcome)>> ActionsAsync(ScheduleView schedule) =>
        [.. (await GetAsync(schedule)).Recent.Reverse().Select(a => (a.FireTime, a.Outcome))];

    /// <summary>The occurrences the schedule started, oldest first; each started once (none found started already).</summary>
    private async Task<List<DateTime>> StartedAsync(ScheduleView schedule)
    {
        var actions = await ActionsAsync(schedule);
        Assert.DoesNotContain(actions, a => a.Outcome is "alreadyStarted" or "failed");
        return [.. actions.Where(a => a.Outcome == "started").Select(a => a.FireTime)];
    }

    private async Task CompleteAsync(Guid instance)
    {
        await Api.SignalAsync(instance, "go", new { value = 1 });
        await Api.WaitForAsync(instance, InstanceStatus.Completed);
    }

    /// <summary>Moves the clock to <paramref name="at"/> on the store's clock in steps of a quarter hour, letting the runner look at each.</summary>
    private async Task StepToAsync(DateTime at)
    {
        while (StoreNow < at)
        {
            await MoveToAsync(StoreNow.AddMinutes(15) < at ? StoreNow.AddMinutes(15) : at);
        }
    }

    /// <summary>Moves the store's clock to <paramref name="at"/> (never back), then waits until the runner has looked twice.</summary>
    private async Task MoveToAsync(DateTime at)
    {
        var by = at - StoreNow;
        if (by > TimeSpan.Zero)
        {
            _clock.Advance(by);
        }

        var runner = Factory.Get<ScheduleRunner>();
        var doorbell = Factory.Get<ScheduleDoorbell>();
        for (var i = 0; i < 2; i++)
        {
            var passes = runner.Passes;
            await Eventually.WaitUntilAsync(() =>
            {
                // A change on this node wakes the runner at once, as a change through the API does.
                doorbell.Ring();
                return runner.Passes != passes;
            }, what: "a schedule runner pass");
        }
    }
}

public sealed class SqliteScheduleFiringTests : ScheduleFiringTests<SqliteBackend>;

public sealed class PostgresScheduleFiringTests : ScheduleFiringTests<PostgresBackend>;

public sealed class MongoDbScheduleFiringTests : ScheduleFiringTests<MongoDbBackend>;
