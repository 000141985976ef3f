using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Search;

/// <summary>How a tenant's attribute names get their slots: one type per name, the first free slot of the type, a clear refusal when none is left.</summary>
public sealed class SearchSlotsTests
{
    [Fact]
    public void New_names_take_the_first_free_slot_of_their_type_and_known_names_keep_theirs()
    {
        DeclaredSearchAttribute[] declared = [new("region", SearchValueType.Keyword, "kw01"), new("amount", SearchValueType.Number, "num02")];

        var (added, problem) = SearchSlots.Assign(declared,
            [("region", SearchValueType.Keyword), ("customer", SearchValueType.Keyword), ("total", SearchValueType.Number), ("vip", SearchValueType.Bool)]);

        Assert.Null(problem);
        Assert.Equal(
            [new("customer", SearchValueType.Keyword, "kw02"), new("total", SearchValueType.Number, "num01"), new DeclaredSearchAttribute("vip", SearchValueType.Bool, "bool01")],
            added);
    }

    [Fact]
    public void A_name_declared_with_another_type_is_refused_and_nothing_is_added()
    {
        var (added, problem) = SearchSlots.Assign([new("region", SearchValueType.Keyword, "kw01")],
            [("customer", SearchValueType.Keyword), ("region", SearchValueType.Number)]);

        Assert.Empty(added);
        Assert.Equal(new SearchDeclarationProblem("region",
            "'region' is already a keyword search attribute in this tenant; an attribute has one type across definitions"), problem);
    }

    [Fact]
    public void A_type_whose_slots_are_all_taken_is_refused()
    {
        var taken = SearchSlots.ByType[SearchValueType.Bool].Select((slot, i) => new DeclaredSearchAttribute($"flag{i}", SearchValueType.Bool, slot)).ToList();

        var (added, problem) = SearchSlots.Assign(taken, [("one_more", SearchValueType.Bool)]);

        Assert.Empty(added);
        Assert.Equal("this tenant has no bool search attribute left: it may declare 3", problem!.Message);
    }

    [Fact]
    public void Every_slot_name_is_unique_and_fits_its_column()
    {
        var slots = SearchSlots.All.Select(s => s.Slot).ToList();
        Assert.Equal(slots.Count, slots.Distinct().Count());
        Assert.All(slots, s => Assert.Matches("^[a-z]+[0-9]{2}$", s));
    }
}
