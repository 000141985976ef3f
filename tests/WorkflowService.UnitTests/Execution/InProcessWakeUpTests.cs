using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.UnitTests.Execution;

/// <summary>The dispatcher's sleep: woken by work due before it planned to look, and never sleeping past work announced for later.</summary>
public sealed class InProcessWakeUpTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 24, 12, 0, 0, TimeSpan.Zero));
    private readonly InProcessWakeUp _wakeUp;

    public InProcessWakeUpTests() => _wakeUp = new InProcessWakeUp(_time, new Clock(_time));

    private long Now => _time.GetUtcNow().ToUnixTimeMilliseconds();

    [Fact]
    public async Task Work_due_before_the_planned_look_wakes_the_sleep_at_once()
    {
        var sleep = _wakeUp.WaitAsync(Now + 1000, TestContext.Current.CancellationToken);

        _wakeUp.Notify(Now + 10);

        Assert.True(await sleep);
    }

    [Fact]
    public async Task Work_announced_for_after_the_planned_look_ends_the_next_sleep_at_its_due_time_not_at_the_poll()
    {
        var start = Now;
        var first = _wakeUp.WaitAsync(start + 1000, TestContext.Current.CancellationToken);
        _wakeUp.Notify(start + 1500);
        Assert.False(first.IsCompleted);
        _time.Advance(TimeSpan.FromMilliseconds(1000));
        Assert.False(await first);

        // The dispatcher plans its next look a poll interval away; the announced work is due before that.
        var second = _wakeUp.WaitAsync(start + 2000, TestContext.Current.CancellationToken);
        _time.Advance(TimeSpan.FromMilliseconds(499));
        Assert.False(second.IsCompleted);
        _time.Advance(TimeSpan.FromMilliseconds(1));
        Assert.False(await second);
        Assert.Equal(long.MaxValue, _wakeUp.SetAsideMs);
    }

    [Fact]
    public async Task Work_announced_for_later_is_kept_through_a_sleep_another_notification_ended()
    {
        var start = Now;
        var first = _wakeUp.WaitAsync(start + 1000, TestContext.Current.CancellationToken);
        _wakeUp.Notify(start + 1500);
        _wakeUp.Notify(start + 3000);
        _wakeUp.Notify(start + 5);
        Assert.True(await first);
        Assert.Equal(start + 1500, _wakeUp.SetAsideMs);

        var second = _wakeUp.WaitAsync(start + 60_000, TestContext.Current.CancellationToken);
        _time.Advance(TimeSpan.FromMilliseconds(1500));
        Assert.False(await second);
    }

    private sealed class Clock(TimeProvider time) : IStoreClock
    {
        public long NowMs() => time.GetUtcNow().ToUnixTimeMilliseconds();

        public StoreInstant Now() => new(time.GetUtcNow().UtcDateTime);
    }
}
