using WorkflowService.Engine.Search.Query;
using static WorkflowService.UnitTests.Search.SearchTestFields;

namespace WorkflowService.UnitTests.Search;

/// <summary>The canonical text: one spelling per tree, and it parses back to the same tree.</summary>
public sealed class SearchCanonicalTests
{
    [Theory]
    [InlineData("""amount>10000 AND region="EU" and status = "running" """, """amount > 10000 and region = "EU" and status = "running" """)]
    [InlineData("""customer = "C-000123" """, """customer = "C-000123" """)]
    [InlineData("""region in ("EU","UK") and submittedAt >= "2026-11-01T01:00:00+01:00" """, """region in ("EU", "UK") and submittedAt >= "2026-11-01T00:00:00Z" """)]
    [InlineData("amount between 1.50 and 2e1", "amount >= 1.50 and amount <= 20")]
    [InlineData("(amount = 1 or amount = 2) and (amount = 3 or amount = 4)", "(amount = 1 or amount = 2) and (amount = 3 or amount = 4)")]
    [InlineData("amount = 1 or (amount = 2 and amount = 3)", "amount = 1 or amount = 2 and amount = 3")]
    [InlineData("((amount = 1))", "amount = 1")]
    [InlineData("not (amount = 1 and urgent = TRUE)", "not (amount = 1 and urgent = true)")]
    [InlineData("not not urgent = false", "not not urgent = false")]
    [InlineData("""customer = "say \"hi\" \\ bye" """, """customer = "say \"hi\" \\ bye" """)]
    [InlineData("""notes StartsWith "scr" or region startsWith "E" """, """notes startsWith "scr" or region startsWith "E" """)]
    [InlineData("""submittedAt < "2026-11-01T00:00:00.1200000Z" """, """submittedAt < "2026-11-01T00:00:00.12Z" """)]
    public void The_canonical_text_is_the_tree_written_one_way(string text, string canonical)
    {
        var filter = Parse(text);
        Assert.Equal(canonical.Trim(), filter.ToString());
        Assert.Equal(filter, Parse(filter.ToString()));
    }

    [Fact]
    public void Equal_trees_hash_alike() =>
        Assert.Equal(Parse("region in (\"EU\") and (amount = 1 or amount = 2.0)").GetHashCode(),
            Parse("(region IN (\"EU\")) AND (amount = 1.00 OR amount = 2)").GetHashCode());

    [Fact]
    public void A_tree_built_by_hand_with_nested_ands_writes_text_that_parses()
    {
        var one = new ComparisonFilter(Amount, ComparisonOperator.Equal, 1m);
        var nested = new AndFilter([new AndFilter([one, one]), new OrFilter([new OrFilter([one, one]), one])]);
        Assert.Equal("(amount = 1 and amount = 1) and ((amount = 1 or amount = 1) or amount = 1)", SearchQuery.Canonical(nested));
        Assert.Equal(3, Assert.IsType<AndFilter>(Parse(SearchQuery.Canonical(nested))).Items.Count);
    }
}
