using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Events;

namespace WorkflowService.UnitTests.Events;

/// <summary>The dispatcher's doorbell: rings coalesce, and a ring taken without waiting is gone.</summary>
public sealed class DeliveryDoorbellTests
{
    [Fact]
    public void Many_rings_are_taken_once()
    {
        using var doorbell = new DeliveryDoorbell();
        Assert.False(doorbell.TryTakeRing());

        doorbell.Ring();
        doorbell.Ring();

        Assert.True(doorbell.TryTakeRing());
        Assert.False(doorbell.TryTakeRing());
    }

    [Fact]
    public async Task A_wait_ends_at_a_ring_or_at_its_bound_and_a_taken_ring_does_not_end_it()
    {
        using var doorbell = new DeliveryDoorbell();
        var time = new FakeTimeProvider();
        doorbell.Ring();
        Assert.True(await doorbell.WaitAsync(TimeSpan.FromSeconds(1), time, TestContext.Current.CancellationToken));

        doorbell.Ring();
        Assert.True(doorbell.TryTakeRing());
        var waiting = doorbell.WaitAsync(TimeSpan.FromSeconds(1), time, TestContext.Current.CancellationToken);
        Assert.False(waiting.IsCompleted);
        time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(await waiting);
    }
}
