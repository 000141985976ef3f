using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Search;

/// <summary>The values this node committed, kept for the views of exactly those versions.</summary>
public sealed class RecentSearchValuesTests
{
    private static readonly DateTime Time = new(2026, 11, 28, 8, 0, 0, 123, DateTimeKind.Utc);

    private static RecentSearchValues Recent(int capacity = 16) =>
        new(Options.Create(new EngineOptions { RecentInstances = capacity }));

    private static WaitPointCommit Commit(Guid id, int version, params SearchAttributeValue[]? values) => new()
    {
        ExpectedVersion = version == 1 ? -1 : version - 1,
        Instance = new WorkflowInstance
        {
            Id = id, DefinitionName = "claim", DefinitionVersion = 1, Version = version,
            SearchAttributes = values is null or { Length: 0 } ? null : values,
        },
    };

    private static WorkflowInstance At(WaitPointCommit commit) => commit.Instance;

    [Fact]
    public void A_start_holds_its_values_as_the_store_gives_them_back()
    {
        var recent = Recent();
        var start = Commit(Guid.NewGuid(), 1,
            new("amount", SearchValueType.Number, 1m / 3m), new("region", SearchValueType.Keyword, "EU"), new("at", SearchValueType.DateTime, Time),
            new("note", SearchValueType.Text, null));

        recent.Committed(start);

        var values = Assert.IsAssignableFrom<IReadOnlyList<SearchAttributeValue>>(recent.Find(At(start)));
        // Numbers through a double, as every store keeps them.
        Assert.Equal((decimal)(double)(1m / 3m), values.Single(v => v.Name == "amount").Value);
        Assert.Equal("EU", values.Single(v => v.Name == "region").Value);
        Assert.Equal(Time, values.Single(v => v.Name == "at").Value);
        // As the store answers: those with a value, by name.
        Assert.DoesNotContain(values, v => v.Name == "note");
        Assert.Equal(["amount", "at", "region"], values.Select(v => v.Name));
    }

    [Fact]
    public void A_later_commit_from_the_held_version_replaces_what_it_evaluated_and_keeps_the_rest()
    {
        var recent = Recent();
        var id = Guid.NewGuid();
        recent.Committed(Commit(id, 1, new("region", SearchValueType.Keyword, "EU"), new("amount", SearchValueType.Number, 700m)));
        var second = Commit(id, 2, new SearchAttributeValue("amount", SearchValueType.Number, 800m));
        recent.Committed(second);
        var afterSecond = recent.Find(At(second))!;
        var third = Commit(id, 3, null);
        recent.Committed(third);

        var values = recent.Find(At(third))!;
        Assert.Equal("EU", values.Single(v => v.Name == "region").Value);
        Assert.Equal(800m, values.Single(v => v.Name == "amount").Value);
        // A commit that evaluated nothing again holds the same values, not a copy of them.
        Assert.Same(afterSecond, values);

        // One that empties a value: the store answers nothing for it.
        var fourth = Commit(id, 4, new SearchAttributeValue("region", SearchValueType.Keyword, null));
        recent.Committed(fourth);
        Assert.Equal(["amount"], recent.Find(At(fourth))!.Select(v => v.Name));
    }

    [Fact]
    public void Another_version_than_the_held_one_is_answered_by_the_store()
    {
        var recent = Recent();
        var id = Guid.NewGuid();
        var start = Commit(id, 1, new SearchAttributeValue("region", SearchValueType.Keyword, "EU"));
        recent.Committed(start);

        // Another node committed version 2: this node's view of version 2 must read the store.
        Assert.Null(recent.Find(new WorkflowInstance { Id = id, DefinitionName = "claim", DefinitionVersion = 1, Version = 2 }));
        // And a commit of this node from version 2 has no entry to build on.
        recent.Committed(Commit(id, 3, new SearchAttributeValue("amount", SearchValueType.Number, 1m)));
        Assert.Null(recent.Find(new WorkflowInstance { Id = id, DefinitionName = "claim", DefinitionVersion = 1, Version = 3 }));
        // A migrated instance (another definition version) too.
        Assert.Null(recent.Find(new WorkflowInstance { Id = id, DefinitionName = "claim", DefinitionVersion = 2, Version = 1 }));
    }

    [Fact]
    public void A_time_finer_than_a_millisecond_is_left_to_the_store()
    {
        var recent = Recent();
        var start = Commit(Guid.NewGuid(), 1, new SearchAttributeValue("at", SearchValueType.DateTime, Time.AddTicks(1)));

        recent.Committed(start);

        Assert.Null(recent.Find(At(start)));
    }

    [Fact]
    public void It_holds_at_most_its_capacity_the_oldest_dropped_first_and_nothing_at_zero()
    {
        var recent = Recent(capacity: 2);
        var commits = Enumerable.Range(0, 3).Select(_ => Commit(Guid.NewGuid(), 1, new SearchAttributeValue("region", SearchValueType.Keyword, "EU"))).ToList();
        commits.ForEach(recent.Committed);

        Assert.Null(recent.Find(At(commits[0])));
        Assert.NotNull(recent.Find(At(commits[1])));
        Assert.NotNull(recent.Find(At(commits[2])));

        var none = Recent(capacity: 0);
        none.Committed(commits[0]);
        Assert.Null(none.Find(At(commits[0])));
    }
}
