using WorkflowService.Engine.Runtime;

namespace WorkflowService.UnitTests.Runtime;

/// <summary>The bounded map of what this node committed most recently (recent instances, their search values).</summary>
public sealed class RecentMapTests
{
    private sealed record Held(int Version);

    private static bool Newer(Held held, Held value) => held.Version > value.Version;

    /// <summary>A map of capacity 2 after each of <paramref name="ids"/> was set in turn (version 1).</summary>
    private static RecentMap<Held> SetInTurn(params Guid[] ids)
    {
        var map = new RecentMap<Held>(2);
        foreach (var id in ids)
        {
            map.Set(id, new Held(1), Newer);
        }

        return map;
    }

    private static void AssertHolds(RecentMap<Held> map, Guid[] held, Guid[] dropped)
    {
        Assert.All(held, id => Assert.True(map.Contains(id)));
        Assert.All(dropped, id => Assert.False(map.Contains(id)));
    }

    [Fact]
    public void It_holds_at_most_its_capacity_the_oldest_added_dropped_first()
    {
        var (a, b, c) = (Guid.NewGuid(), Guid.NewGuid(), Guid.NewGuid());

        var map = SetInTurn(a, b, c);

        AssertHolds(map, held: [b, c], dropped: [a]);
    }

    [Fact]
    public void A_replaced_entry_keeps_its_slot_and_the_newer_of_two_stays()
    {
        var (a, b) = (Guid.NewGuid(), Guid.NewGuid());
        var map = SetInTurn(a, b);

        map.Set(a, new Held(3), Newer);
        map.Set(a, new Held(2), Newer);

        Assert.True(map.TryGet(a, out var held));
        Assert.Equal(3, held.Version);
        // Replacing took no new slot: both still fit.
        Assert.True(map.Contains(b));
    }

    [Fact]
    public void The_slot_of_a_removed_entry_evicts_nothing_added_after_it()
    {
        var (a, b, c) = (Guid.NewGuid(), Guid.NewGuid(), Guid.NewGuid());
        var map = SetInTurn(a);
        map.Remove(a);
        map.Set(a, new Held(2), Newer);
        map.Set(b, new Held(1), Newer);

        // a's first slot leaves the queue first and takes nothing with it; a's second slot is the oldest now.
        map.Set(c, new Held(1), Newer);

        AssertHolds(map, held: [b, c], dropped: [a]);
    }

    [Fact]
    public void A_capacity_of_zero_holds_nothing()
    {
        var map = new RecentMap<Held>(0);
        var a = Guid.NewGuid();

        map.Set(a, new Held(1), Newer);

        Assert.True(map.IsOff);
        Assert.False(map.TryGet(a, out _));
    }

    [Fact]
    public void Concurrent_commits_of_the_same_instances_leave_it_within_its_capacity()
    {
        // Replacing an entry while its slot is being evicted used to keep the entry with no slot left to evict it.
        var map = new RecentMap<Held>(8);
        var ids = Enumerable.Range(0, 64).Select(_ => Guid.NewGuid()).ToArray();

        Parallel.For(0, 4, new ParallelOptions { MaxDegreeOfParallelism = 4 }, worker =>
        {
            for (var i = 0; i < 20_000; i++)
            {
                map.Set(ids[(i * 7 + worker) % ids.Length], new Held(i), Newer);
            }
        });

        Assert.InRange(map.Count, 1, 8);
    }
}
