using WorkflowService.Engine.Schedules;

namespace WorkflowService.UnitTests.Schedules;

/// <summary>What each overlap policy does with due occurrences while the last instance is open, and when it is not.</summary>
public sealed class OverlapDecisionTests
{
    [Fact]
    public void Skip_starts_nothing_while_the_last_instance_is_open_and_one_when_it_is_not()
    {
        Assert.Equal("start [] cancel False buffer  skip [1,2]", Text(OverlapDecision.For(ScheduleOverlap.Skip, true, null, [1, 2])));
        Assert.Equal("start [1] cancel False buffer  skip [2]", Text(OverlapDecision.For(ScheduleOverlap.Skip, false, null, [1, 2])));
    }

    [Fact]
    public void BufferOne_keeps_the_first_waiting_and_starts_it_when_the_last_instance_ended()
    {
        Assert.Equal("start [] cancel False buffer 1 skip [2]", Text(OverlapDecision.For(ScheduleOverlap.BufferOne, true, null, [1, 2])));
        // Still open: the buffered one keeps its place, a new one is skipped.
        Assert.Equal("start [] cancel False buffer 1 skip [3]", Text(OverlapDecision.For(ScheduleOverlap.BufferOne, true, 1, [3])));
        // Not open: the first starts, the next waits for it.
        Assert.Equal("start [1] cancel False buffer 2 skip [3]", Text(OverlapDecision.For(ScheduleOverlap.BufferOne, false, null, [1, 2, 3])));
        var ended = OverlapDecision.For(ScheduleOverlap.BufferOne, false, 1, []);
        Assert.Equal([1L], ended.Start);
        Assert.Null(ended.Buffered);
    }

    [Fact]
    public void AllowAll_starts_every_due_occurrence()
    {
        var decision = OverlapDecision.For(ScheduleOverlap.AllowAll, true, null, [1, 2, 3]);
        Assert.Equal([1L, 2L, 3L], decision.Start);
        Assert.False(decision.CancelPrevious);
    }

    [Fact]
    public void CancelPrevious_cancels_the_open_instance_and_starts_the_newest()
    {
        Assert.Equal("start [2] cancel True buffer  skip [1]", Text(OverlapDecision.For(ScheduleOverlap.CancelPrevious, true, null, [1, 2])));
        Assert.False(OverlapDecision.For(ScheduleOverlap.CancelPrevious, false, null, [1]).CancelPrevious);
    }

    private static string Text(OverlapDecision d) =>
        $"start [{string.Join(',', d.Start)}] cancel {d.CancelPrevious} buffer {d.Buffered} skip [{string.Join(',', d.Skipped)}]";
}
