using WorkflowService.Engine.Schedules;

namespace WorkflowService.UnitTests.Schedules;

/// <summary>Which due occurrences run under each catch-up policy, after a pass on time and after a downtime.</summary>
public sealed class OccurrencePlanTests
{
    private const long Minute = 60_000;
    private static readonly DateTime Created = new(2027, 1, 1, 0, 0, 0, DateTimeKind.Utc);
    private static readonly long Start = ScheduleCalendar.Ms(Created);

    /// <summary>Every minute from <see cref="Created"/>; late after 30 s, looking back at most an hour, at most 5 a pass.</summary>
    private static readonly CatchUpLimits Limits = new(30_000, 60 * Minute, 5);

    private static readonly ScheduleCalendar EveryMinute = ScheduleCalendar.For(new Schedule
    {
        Name = "s", DefinitionName = "d", BusinessKeyTemplate = BusinessKeyTemplate.Default, IntervalSeconds = 60, StartAt = Created, CreatedAt = Created,
    });

    private static OccurrencePlan Plan(long cursor, long now, ScheduleCatchUp policy, long? window = null, long jitterMs = 0) =>
        OccurrencePlan.At(EveryMinute, cursor, now, policy, window, new ScheduleJitter(Guid.Empty, jitterMs), Limits);

    [Fact]
    public void A_pass_on_time_runs_the_due_occurrence_and_moves_the_cursor_to_the_next()
    {
        foreach (var policy in Enum.GetValues<ScheduleCatchUp>())
        {
            var plan = Plan(Start + Minute, Start + Minute + 500, policy);
            Assert.Equal([Start + Minute], plan.Run);
            Assert.Empty(plan.Skipped);
            Assert.Equal(Start + (2 * Minute), plan.NextFireMs);
        }
    }

    [Fact]
    public void Nothing_runs_before_its_time()
    {
        var plan = Plan(Start + Minute, Start + Minute - 1, ScheduleCatchUp.All);
        Assert.Empty(plan.Run);
        Assert.Equal(Start + Minute, plan.NextFireMs);
    }

    [Fact]
    public void Skip_drops_what_was_missed_and_runs_what_is_on_time()
    {
        // Down from minute 1 to 10 m 20 s: minute 10 is within 30 s, the rest were missed.
        var plan = Plan(Start + Minute, Start + (10 * Minute) + 20_000, ScheduleCatchUp.Skip);
        Assert.Equal([Start + (10 * Minute)], plan.Run);
        Assert.True(plan.SkippedUnseen);
        Assert.Equal(Start + (11 * Minute), plan.NextFireMs);
    }

    [Fact]
    public void Last_runs_only_the_newest_missed_occurrence()
    {
        // At 10 m 45 s even minute 10 is late; it runs, the ones before it do not.
        var plan = Plan(Start + Minute, Start + (10 * Minute) + 45_000, ScheduleCatchUp.Last);
        Assert.Equal([Start + (10 * Minute)], plan.Run);
        Assert.True(plan.SkippedUnseen);
        Assert.Equal(Start + (11 * Minute), plan.NextFireMs);
    }

    [Fact]
    public void All_runs_the_missed_ones_within_the_window_a_pass_at_a_time()
    {
        // A 4-minute window at 10 m 30 s: minutes 7 to 10; minute 1 to 6 are older.
        var plan = Plan(Start + Minute, Start + (10 * Minute) + 30_000, ScheduleCatchUp.All, window: 4 * Minute);
        Assert.Equal([Start + (7 * Minute), Start + (8 * Minute), Start + (9 * Minute), Start + (10 * Minute)], plan.Run);
        Assert.True(plan.SkippedUnseen);

        // A longer window than a pass may run: five now, the cursor on the sixth for the next pass.
        var first = Plan(Start + Minute, Start + (10 * Minute) + 30_000, ScheduleCatchUp.All, window: 30 * Minute);
        Assert.Equal(Enumerable.Range(1, 5).Select(m => Start + (m * Minute)), first.Run);
        Assert.Equal(Start + (6 * Minute), first.NextFireMs);
        var second = Plan(first.NextFireMs!.Value, Start + (10 * Minute) + 31_000, ScheduleCatchUp.All, window: 30 * Minute);
        Assert.Equal(Enumerable.Range(6, 5).Select(m => Start + (m * Minute)), second.Run);
        Assert.Equal(Start + (11 * Minute), second.NextFireMs);
    }

    [Fact]
    public void Jitter_delays_an_occurrence_by_the_same_amount_on_every_node()
    {
        var jitter = new ScheduleJitter(Guid.Parse("0193a4a0-0000-7000-8000-000000000001"), 30_000);
        var delay = jitter.For(Start + Minute);
        Assert.InRange(delay, 0, 29_999);
        Assert.Equal(delay, new ScheduleJitter(jitter.ScheduleId, 30_000).For(Start + Minute));
        var before = OccurrencePlan.At(EveryMinute, Start + Minute, Start + Minute + delay - 1, ScheduleCatchUp.Skip, null, jitter, Limits);
        Assert.Empty(before.Run);
        var at = OccurrencePlan.At(EveryMinute, Start + Minute, Start + Minute + delay, ScheduleCatchUp.Skip, null, jitter, Limits);
        Assert.Equal([Start + Minute], at.Run);
    }

    [Fact]
    public void A_schedule_without_a_cursor_plans_nothing()
    {
        Assert.Empty(OccurrencePlan.At(EveryMinute, null, Start + Minute, ScheduleCatchUp.All, null, default, Limits).Run);
    }
}
