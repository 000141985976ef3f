using WorkflowService.Engine.Schedules;

namespace WorkflowService.UnitTests.Schedules;

/// <summary>When occurrences fall: cron in a time zone across daylight-saving changes, and fixed intervals within start and end.</summary>
public sealed class ScheduleCalendarTests
{
    private static readonly DateTime Created = new(2027, 1, 1, 0, 0, 0, DateTimeKind.Utc);

    private static ScheduleCalendar Cron(string cron, string zone, DateTime? start = null, DateTime? end = null) => ScheduleCalendar.For(new Schedule
    {
        Name = "s", DefinitionName = "d", BusinessKeyTemplate = BusinessKeyTemplate.Default, Cron = cron, TimeZone = zone, StartAt = start, EndAt = end,
        CreatedAt = Created,
    });

    private static ScheduleCalendar Interval(long seconds, DateTime? start = null, DateTime? end = null) => ScheduleCalendar.For(new Schedule
    {
        Name = "s", DefinitionName = "d", BusinessKeyTemplate = BusinessKeyTemplate.Default, IntervalSeconds = seconds, StartAt = start, EndAt = end,
        CreatedAt = Created,
    });

    private static DateTime[] Fires(ScheduleCalendar calendar, DateTime from, DateTime to) =>
        [.. calendar.Between(ScheduleCalendar.Ms(from), ScheduleCalendar.Ms(to)).Select(ScheduleCalendar.Utc)];

    private static DateTime Utc(string text) => DateTime.Parse(text, System.Globalization.CultureInfo.InvariantCulture,
        System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal);

    [Fact]
    public void A_daily_cron_keeps_its_local_time_across_the_spring_change_in_two_zones()
    {
        // Berlin moves from UTC+1 to UTC+2 on 28 March 2027, New York from UTC-5 to UTC-4 on 14 March 2027.
        Assert.Equal([Utc("2027-03-27T08:00:00Z"), Utc("2027-03-28T07:00:00Z")],
            Fires(Cron("0 9 * * *", "Europe/Berlin"), Utc("2027-03-27T00:00:00Z"), Utc("2027-03-28T23:59:59Z")));
        Assert.Equal([Utc("2027-03-13T14:00:00Z"), Utc("2027-03-14T13:00:00Z")],
            Fires(Cron("0 9 * * *", "America/New_York"), Utc("2027-03-13T00:00:00Z"), Utc("2027-03-14T23:59:59Z")));
    }

    [Fact]
    public void A_time_the_spring_change_skips_runs_once_just_after_the_gap()
    {
        // 02:30 does not exist in Berlin on 28 March 2027: the clock jumps from 02:00 to 03:00 (01:00 UTC).
        Assert.Equal([Utc("2027-03-27T01:30:00Z"), Utc("2027-03-28T01:00:00Z"), Utc("2027-03-29T00:30:00Z")],
            Fires(Cron("30 2 * * *", "Europe/Berlin"), Utc("2027-03-27T00:00:00Z"), Utc("2027-03-29T23:59:59Z")));
    }

    [Fact]
    public void A_time_the_autumn_change_passes_twice_runs_once_but_an_every_half_hour_cron_runs_in_both()
    {
        // 02:30 happens twice in Berlin on 31 October 2027 (00:30 and 01:30 UTC).
        Assert.Equal([Utc("2027-10-31T00:30:00Z"), Utc("2027-11-01T01:30:00Z")],
            Fires(Cron("30 2 * * *", "Europe/Berlin"), Utc("2027-10-31T00:00:00Z"), Utc("2027-11-01T23:59:59Z")));
        Assert.Equal(
            [Utc("2027-10-31T00:00:00Z"), Utc("2027-10-31T00:30:00Z"), Utc("2027-10-31T01:00:00Z"), Utc("2027-10-31T01:30:00Z")],
            Fires(Cron("*/30 2 * * *", "Europe/Berlin"), Utc("2027-10-30T23:00:00Z"), Utc("2027-10-31T02:00:00Z")));
    }

    [Fact]
    public void A_six_field_cron_has_seconds_and_start_and_end_bound_it()
    {
        var calendar = Cron("*/20 * * * * *", "UTC", start: Utc("2027-01-01T00:00:30Z"), end: Utc("2027-01-01T00:01:20Z"));
        Assert.Equal([Utc("2027-01-01T00:00:40Z"), Utc("2027-01-01T00:01:00Z"), Utc("2027-01-01T00:01:20Z")],
            Fires(calendar, Utc("2027-01-01T00:00:00Z"), Utc("2027-01-01T01:00:00Z")));
        Assert.Null(calendar.NextAfter(ScheduleCalendar.Ms(Utc("2027-01-01T00:01:20Z"))));
    }

    [Fact]
    public void An_interval_counts_from_its_start_or_one_interval_after_creation()
    {
        Assert.Equal([Created.AddMinutes(10), Created.AddMinutes(20)], Fires(Interval(600), Created, Created.AddMinutes(25)));
        var start = Utc("2027-02-01T00:00:07Z");
        var calendar = Interval(60, start, end: start.AddMinutes(2));
        Assert.Equal([start, start.AddMinutes(1), start.AddMinutes(2)], Fires(calendar, Created, start.AddHours(1)));
        Assert.Equal(ScheduleCalendar.Ms(start.AddMinutes(1)), calendar.NextAfter(ScheduleCalendar.Ms(start.AddSeconds(30))));
    }
}
