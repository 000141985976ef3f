using WorkflowService.Engine.Schedules;
using WorkflowService.RunnerBackends;

namespace WorkflowService.UnitTests.Runners;

/// <summary>
/// The store reader's view of an instance a schedule started: the occurrence read back from the idempotency key the
/// service writes (OccurrenceStarter.KeyOf), and any other key refused rather than guessed.
/// </summary>
public sealed class ScheduledStartTests
{
    [Fact]
    public void The_occurrence_is_read_back_from_the_key_the_service_writes()
    {
        var schedule = Guid.NewGuid();
        var fire = new DateTimeOffset(2026, 11, 28, 12, 0, 1, TimeSpan.Zero);

        var start = ScheduledStart.Parse(Guid.NewGuid(), OccurrenceStarter.KeyOf(schedule, fire.ToUnixTimeMilliseconds()), fire.AddMilliseconds(250).UtcDateTime);

        Assert.Equal(schedule, start.ScheduleId);
        Assert.Equal(fire.ToUnixTimeMilliseconds(), start.FireMs);
        Assert.Equal(TimeSpan.FromMilliseconds(250), start.Delay);
    }

    [Theory]
    [InlineData("client-key-1")]
    [InlineData("schedule:not-a-guid:1000")]
    [InlineData("schedule:0b5a0e0c9a6f4f5e9d1c2b3a4f5e6d7c:soon")]
    public void A_key_of_another_shape_is_refused(string key)
    {
        Assert.Throws<FormatException>(() => ScheduledStart.Parse(Guid.NewGuid(), key, DateTime.UtcNow));
    }
}
