using WorkflowService.Storage.Relational.PostgreSql;

namespace WorkflowService.UnitTests.Storage;

public sealed class PoolStarvationWatchTests
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(200);

    [Fact]
    public void A_pool_that_completes_work_is_left_alone_however_long_its_queue()
    {
        var watch = new PoolStarvationWatch(Interval, TimeSpan.FromSeconds(1));
        for (var sample = 0; sample < 100; sample++)
        {
            Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 500, completed: sample * 1_000));
        }
    }

    [Fact]
    public void An_idle_pool_is_not_starved()
    {
        var watch = new PoolStarvationWatch(Interval, TimeSpan.FromSeconds(1));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 0, completed: 7));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 0, completed: 7));
    }

    [Fact]
    public void Work_queued_and_none_completed_raises_once_and_lowers_after_the_calm()
    {
        var watch = new PoolStarvationWatch(Interval, TimeSpan.FromSeconds(1));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 3, completed: 40));
        Assert.Equal(PoolStarvationWatch.Action.Raise, watch.Observe(pending: 9, completed: 40));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 12, completed: 40));

        // Moving again: four free samples are not yet the calm of one second, and a stall starts the calm over.
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 1, completed: 90));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 1, completed: 95));
        Assert.Equal(PoolStarvationWatch.Action.None, watch.Observe(pending: 1, completed: 95));
        var lowered = Enumerable.Range(0, 5).Select(sample => watch.Observe(pending: 0, completed: 100 + sample)).ToList();
        Assert.Equal([PoolStarvationWatch.Action.None, PoolStarvationWatch.Action.None, PoolStarvationWatch.Action.None,
            PoolStarvationWatch.Action.None, PoolStarvationWatch.Action.Lower], lowered);

        Assert.Equal(PoolStarvationWatch.Action.Raise, watch.Observe(pending: 2, completed: 104));
    }
}
