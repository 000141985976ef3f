using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.UnitTests.Execution;

/// <summary>
/// The feed long-polls wait on: this node's commits wake them at once; a recheck read (other nodes' commits) wakes only
/// the waiters whose instance moved past the version they hold; one waiter giving up does not drop the others.
/// </summary>
public sealed class InstanceChangeFeedTests
{
    private static WorkflowInstance At(Guid id, int version, InstanceStatus status = InstanceStatus.Waiting) =>
        new() { Id = id, DefinitionName = "t", Version = version, Status = status };

    [Fact]
    public async Task A_commit_on_this_node_wakes_every_waiter_with_its_own_copy_of_the_state()
    {
        var feed = new InstanceChangeFeed();
        var id = Guid.NewGuid();
        var first = feed.NextChange(id);
        var second = feed.NextChange(id);

        var committed = At(id, 3, InstanceStatus.Completed);
        feed.Publish(committed);

        var one = await first;
        var other = await second;
        Assert.Equal(3, one!.Version);
        Assert.Equal(InstanceStatus.Completed, one.Status);
        Assert.NotSame(committed, one);
        Assert.Same(one, other);
        Assert.Equal(0, feed.Watched);
    }

    [Fact]
    public async Task When_one_waiter_gives_up_another_on_the_same_instance_is_still_woken()
    {
        var feed = new InstanceChangeFeed();
        var id = Guid.NewGuid();
        var leaving = feed.NextChange(id);
        var staying = feed.NextChange(id);

        feed.Forget(id, leaving);
        Assert.Equal(1, feed.Watched);
        feed.Publish(At(id, 2));

        Assert.Equal(2, (await staying)!.Version);
    }

    [Fact]
    public void The_last_waiter_giving_up_drops_the_subscription_and_a_new_waiter_gets_a_fresh_one()
    {
        var feed = new InstanceChangeFeed();
        var id = Guid.NewGuid();
        var only = feed.NextChange(id);

        feed.Forget(id, only);
        Assert.Equal(0, feed.Watched);

        var next = feed.NextChange(id);
        Assert.NotSame(only, next);
        Assert.False(next.IsCompleted);
    }

    [Fact]
    public async Task A_recheck_wakes_only_the_waiters_whose_instance_is_newer_than_the_version_they_hold()
    {
        var feed = new InstanceChangeFeed();
        var (moved, still, unread) = (Guid.NewGuid(), Guid.NewGuid(), Guid.NewGuid());
        var movedChange = feed.NextChange(moved);
        feed.Observed(moved, movedChange, 4);
        var stillChange = feed.NextChange(still);
        feed.Observed(still, stillChange, 7);
        // Subscribed but not read yet: no version to compare with, so a recheck leaves it to its own read.
        var unreadChange = feed.NextChange(unread);

        var watched = feed.ToRecheck();
        Assert.Equal(new[] { moved, still }.Order(), watched.Order());
        feed.Recheck(watched, [At(moved, 5), At(still, 7), At(unread, 9)]);

        Assert.Equal(5, (await movedChange)!.Version);
        Assert.False(stillChange.IsCompleted);
        Assert.False(unreadChange.IsCompleted);
        Assert.Equal(2, feed.Watched);
    }

    [Fact]
    public async Task A_recheck_never_hands_a_waiter_a_state_older_than_the_one_it_holds()
    {
        var feed = new InstanceChangeFeed();
        var id = Guid.NewGuid();
        var first = feed.NextChange(id);
        feed.Observed(id, first, 6);
        // Two waiters hold different versions: the older one decides when a read is news.
        var second = feed.NextChange(id);
        feed.Observed(id, second, 8);

        feed.Recheck([id], [At(id, 5)]);
        Assert.False(first.IsCompleted);
        feed.Recheck([id], [At(id, 7)]);

        Assert.Equal(7, (await second)!.Version);
    }

    [Fact]
    public async Task A_recheck_that_no_longer_finds_the_instance_wakes_its_waiters_with_nothing()
    {
        var feed = new InstanceChangeFeed();
        var id = Guid.NewGuid();
        var change = feed.NextChange(id);
        feed.Observed(id, change, 1);

        feed.Recheck([id], []);

        Assert.Null(await change);
        Assert.Equal(0, feed.Watched);
    }
}
