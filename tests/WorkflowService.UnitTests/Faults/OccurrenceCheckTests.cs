using WorkflowService.FaultRunner;
using WorkflowService.RunnerBackends;

namespace WorkflowService.UnitTests.Faults;

/// <summary>
/// The schedules fault row's check on hand-made starts: schedules firing every second, each occurrence started once and
/// on time passes; each way a run can break the calendar (never started, started twice, a time no calendar has, early,
/// late, late near a fault beyond the lease) fails, naming it.
/// </summary>
public sealed class OccurrenceCheckTests
{
    private static readonly DateTimeOffset From = new(2026, 11, 28, 12, 0, 0, TimeSpan.Zero);
    private static readonly DateTimeOffset To = From.AddSeconds(10);
    private static readonly TimeSpan OnTime = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan AfterFault = TimeSpan.FromSeconds(6);
    private static readonly Guid[] Schedules = [Guid.NewGuid(), Guid.NewGuid()];

    [Fact]
    public void Every_occurrence_started_once_and_on_time_passes()
    {
        var verdict = Check(OnTimeStarts());

        Assert.True(verdict.Passed, string.Join("; ", verdict.Failures));
        Assert.Contains("20 of 20 occurrences", verdict.Summary, StringComparison.Ordinal);
    }

    [Fact]
    public void An_occurrence_that_never_started_fails_the_row()
    {
        var starts = OnTimeStarts();
        starts.RemoveAt(5);

        var failure = Assert.Single(Check(starts).Failures);

        Assert.StartsWith("1 occurrences never started", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_occurrence_started_twice_fails_the_row()
    {
        var starts = OnTimeStarts();
        starts.Add(starts[3] with { InstanceId = Guid.NewGuid() });

        var failure = Assert.Single(Check(starts).Failures);

        Assert.StartsWith("1 occurrences started more than once", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_instance_for_a_time_no_calendar_has_fails_the_row()
    {
        var starts = OnTimeStarts();
        starts.Add(Start(Schedules[0], From.AddMilliseconds(2500), TimeSpan.FromMilliseconds(10)));

        var failure = Assert.Single(Check(starts).Failures);

        Assert.StartsWith("1 instances started for a time no calendar has", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_occurrence_created_before_its_time_on_the_store_clock_is_early()
    {
        var starts = OnTimeStarts();
        starts[4] = Start(starts[4].ScheduleId, DateTimeOffset.FromUnixTimeMilliseconds(starts[4].FireMs), TimeSpan.FromMilliseconds(-500));

        var failure = Assert.Single(Check(starts).Failures);

        Assert.StartsWith("1 occurrences started early", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_occurrence_later_than_the_poll_and_slack_away_from_any_fault_is_late()
    {
        var starts = OnTimeStarts();
        starts[4] = Start(starts[4].ScheduleId, DateTimeOffset.FromUnixTimeMilliseconds(starts[4].FireMs), TimeSpan.FromSeconds(4));

        var failure = Assert.Single(Check(starts).Failures);

        Assert.StartsWith("1 occurrences started more than 3 s late", failure, StringComparison.Ordinal);
    }

    [Fact]
    public void An_occurrence_due_during_a_fault_may_wait_for_the_lease_but_no_longer()
    {
        var fault = (From.AddSeconds(4), From.AddSeconds(5));
        var starts = OnTimeStarts();
        var waitedForLease = starts.FindIndex(s => s.FireMs == From.AddSeconds(5).ToUnixTimeMilliseconds());
        starts[waitedForLease] = Start(starts[waitedForLease].ScheduleId, From.AddSeconds(5), TimeSpan.FromSeconds(5));

        Assert.True(Check(starts, fault).Passed);

        starts[waitedForLease] = Start(starts[waitedForLease].ScheduleId, From.AddSeconds(5), TimeSpan.FromSeconds(7));
        var failure = Assert.Single(Check(starts, fault).Failures);
        Assert.StartsWith("1 occurrences due near a fault started more than 6 s late", failure, StringComparison.Ordinal);
    }

    private static OccurrenceVerdict Check(List<ScheduledStart> starts, params (DateTimeOffset From, DateTimeOffset To)[] faults) =>
        OccurrenceCheck.Check(Schedules, From, To, starts, faults, OnTime, AfterFault);

    private static List<ScheduledStart> OnTimeStarts() =>
        [.. Schedules.SelectMany(s => Enumerable.Range(0, 10).Select(i => Start(s, From.AddSeconds(i), TimeSpan.FromMilliseconds(40))))];

    private static ScheduledStart Start(Guid schedule, DateTimeOffset fire, TimeSpan delay) =>
        new(Guid.NewGuid(), schedule, fire.ToUnixTimeMilliseconds(), (fire + delay).UtcDateTime);
}
