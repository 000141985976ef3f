using WorkflowService.Engine.Search.Query;
using static WorkflowService.UnitTests.Search.SearchTestFields;

namespace WorkflowService.UnitTests.Search;

/// <summary>orderBy: fields with asc or desc, each once, within the limit.</summary>
public sealed class SearchOrderParsingTests
{
    [Fact]
    public void Fields_sort_ascending_unless_desc()
    {
        var parsed = SearchQuery.ParseOrder("submittedAt DESC, amount, region asc", Catalog);
        Assert.True(parsed.Succeeded, parsed.Error?.Message);
        Assert.Equal([new SearchOrder(SubmittedAt, true), new SearchOrder(Amount, false), new SearchOrder(Region, false)], parsed.Value);
        Assert.Equal("submittedAt desc, amount asc, region asc", SearchQuery.Canonical(parsed.Value));
    }

    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    public void Blank_text_is_no_order(string text) => Assert.Empty(SearchQuery.ParseOrder(text, Catalog).Value!);

    [Theory]
    [InlineData("regoin desc", 0, "regoin", "orderBy: 'regoin' is not a declared search attribute")]
    [InlineData("notes", 0, "notes", "orderBy: 'notes' is text, which does not sort; sort by a keyword, number, datetime or bool")]
    [InlineData("amount, region, amount desc", 16, "amount", "orderBy: 'amount' appears twice")]
    [InlineData("amount up", 7, null, "orderBy: expected 'asc', 'desc', ',' or the end of the orderBy at position 7, found 'up'")]
    [InlineData("amount,", 7, null, "orderBy: expected a field name at position 7, found the end of the text")]
    [InlineData("desc", 0, null, "orderBy: expected a field name at position 0, found 'desc'")]
    [InlineData("amount; region", 6, null, "orderBy: ';' at position 6 is not part of the language")]
    public void A_bad_order_is_refused_where_it_stands(string text, int position, string? field, string message)
    {
        var parsed = SearchQuery.ParseOrder(text, Catalog);
        Assert.Null(parsed.Value);
        Assert.Equal(new SearchQueryError(message, position, field), parsed.Error);
    }

    [Fact]
    public void Fields_past_the_limit_are_refused()
    {
        var parsed = SearchQuery.ParseOrder("amount, region, customer", Catalog, new SearchQueryOptions { MaxOrderFields = 2 });
        Assert.Equal(new SearchQueryError("orderBy: the order has more than 2 fields", 16, null), parsed.Error);
    }
}
