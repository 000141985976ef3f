using WorkflowService.Engine.Search.Query;
using static WorkflowService.UnitTests.Search.SearchTestFields;

namespace WorkflowService.UnitTests.Search;

/// <summary>Every refusal names what is wrong in the client's terms, where it is, and the field it is about.</summary>
public sealed class SearchFilterErrorTests
{
    [Fact]
    public void An_undeclared_field_is_named()
    {
        var error = Refuse("""amount > 5 and regoin = "EU" """);
        Assert.Equal(new SearchQueryError("filter: 'regoin' is not a declared search attribute", 15, "regoin"), error);
    }

    [Fact]
    public void Field_names_are_case_sensitive() => Assert.Equal("Amount", Refuse("Amount > 5").Field);

    [Theory]
    [InlineData("amount = \"high\"", 9, "filter: 'amount' is a number; \"high\" is not a number")]
    [InlineData("amount = true", 9, "filter: 'amount' is a number; true is not a number")]
    [InlineData("amount = 1e400", 9, "filter: 'amount' is a number; 1e400 is not a number within ±7.9e28")]
    [InlineData("region = 12", 9, "filter: 'region' is a keyword; 12 is not a string in double quotes")]
    [InlineData("notes = false", 8, "filter: 'notes' is text; false is not a string in double quotes")]
    [InlineData("urgent = \"yes\"", 9, "filter: 'urgent' is a bool; \"yes\" is not true or false")]
    [InlineData("urgent = 1", 9, "filter: 'urgent' is a bool; 1 is not true or false")]
    [InlineData("amount in (1, \"2\")", 14, "filter: 'amount' is a number; \"2\" is not a number")]
    [InlineData("amount between 1 and \"9\"", 21, "filter: 'amount' is a number; \"9\" is not a number")]
    public void A_value_of_the_wrong_type_is_refused_where_it_stands(string text, int position, string message) =>
        Assert.Equal(new SearchQueryError(message, position, text.Split(' ')[0]), Refuse(text));

    [Theory]
    [InlineData("submittedAt > \"yesterday\"")]
    [InlineData("submittedAt > \"2026-11-01\"")]
    [InlineData("submittedAt > \"2026-11-01T00:00:00\"")]
    [InlineData("submittedAt > \"2026-13-01T00:00:00Z\"")]
    [InlineData("submittedAt > 20261101")]
    public void A_datetime_needs_a_date_a_time_and_an_offset(string text)
    {
        var error = Refuse(text);
        Assert.StartsWith("filter: 'submittedAt' is a datetime; ", error.Message, StringComparison.Ordinal);
        Assert.EndsWith("is not an ISO 8601 date and time with an offset, such as \"2026-11-01T00:00:00Z\"", error.Message, StringComparison.Ordinal);
        Assert.Equal((14, "submittedAt"), (error.Position, error.Field));
    }

    [Theory]
    [InlineData("urgent > true", "filter: 'urgent' is a bool; it takes = and !=, not >")]
    [InlineData("urgent in (true)", "filter: 'urgent' is a bool; it takes = and !=, not in")]
    [InlineData("notes != \"x\"", "filter: 'notes' is text; it takes = and startsWith, not !=")]
    [InlineData("notes between \"a\" and \"b\"", "filter: 'notes' is text; it takes = and startsWith, not between")]
    [InlineData("amount startsWith \"1\"", "filter: 'amount' is a number; it takes =, !=, <, <=, >, >=, between and in, not startsWith")]
    [InlineData("submittedAt startsWith \"2026\"", "filter: 'submittedAt' is a datetime; it takes =, !=, <, <=, >, >=, between and in, not startsWith")]
    public void An_operator_the_type_does_not_take_is_refused_at_the_operator(string text, string message)
    {
        var field = text.Split(' ')[0];
        Assert.Equal(new SearchQueryError(message, field.Length + 1, field), Refuse(text));
    }

    [Theory]
    [InlineData("notes = \"--\"", "filter: 'notes' is text; \"--\" has no word to match (letters or digits)")]
    [InlineData("notes startsWith \"scr een\"", "filter: 'notes' is text; startsWith takes one word of letters and digits, not \"scr een\"")]
    [InlineData("region startsWith \"\"", "filter: startsWith on 'region' needs at least one character")]
    [InlineData("region startsWith 5", "filter: startsWith takes a string in double quotes; 5 is not one")]
    public void Text_and_prefix_values_are_checked(string text, string message) =>
        Assert.Equal(message, Refuse(text).Message);

    [Theory]
    [InlineData("", 0, "filter: expected a field name, 'not' or '(' at position 0, found the end of the text")]
    [InlineData("amount", 6, "filter: expected an operator (=, !=, <, <=, >, >=, between, in or startsWith) after 'amount' at position 6, found the end of the text")]
    [InlineData("amount >", 8, "filter: expected a value at position 8, found the end of the text")]
    [InlineData("amount > )", 9, "filter: expected a value at position 9, found ')'")]
    [InlineData("amount == 5", 8, "filter: expected a value at position 8, found '='")]
    [InlineData("amount > 5 region = \"EU\"", 11, "filter: expected 'and', 'or' or the end of the filter at position 11, found 'region'")]
    [InlineData("(amount > 5", 11, "filter: expected 'and', 'or' or ')' at position 11, found the end of the text")]
    [InlineData("amount > 5)", 10, "filter: expected 'and', 'or' or the end of the filter at position 10, found ')'")]
    [InlineData("amount > 5 and", 14, "filter: expected a field name, 'not' or '(' at position 14, found the end of the text")]
    [InlineData("and = 5", 0, "filter: expected a field name, 'not' or '(' at position 0, found 'and'")]
    [InlineData("\"amount\" = 5", 0, "filter: expected a field name, 'not' or '(' at position 0, found \"amount\"")]
    [InlineData("amount in 1", 10, "filter: expected '(' after 'amount in' at position 10, found 1")]
    [InlineData("amount in ()", 11, "filter: expected a value at position 11, found ')'")]
    [InlineData("amount in (1 2)", 13, "filter: expected ',' or ')' at position 13, found 2")]
    [InlineData("amount between 1 or 2", 17, "filter: expected 'and' between the bounds of 'amount' at position 17, found 'or'")]
    [InlineData("region startsWith", 17, "filter: expected a string in double quotes at position 17, found the end of the text")]
    [InlineData("amount > 5 # 6", 11, "filter: '#' at position 11 is not part of the language")]
    [InlineData("amount ! 5", 7, "filter: '!' at position 7 is not part of the language")]
    [InlineData("région = \"EU\"", 1, "filter: 'é' at position 1 is not part of the language")]
    [InlineData("region = \"EU", 9, "filter: the string at position 9 has no closing \"")]
    [InlineData("region = \"E\\U\"", 11, "filter: a backslash in a string escapes \" or \\ only; position 11 has \\U")]
    [InlineData("region = \"EU\\", 12, "filter: a backslash in a string escapes \" or \\ only; position 12 has \\")]
    public void A_syntax_error_says_what_was_expected_and_where(string text, int position, string message) =>
        Assert.Equal(new SearchQueryError(message, position, null), Refuse(text));

    [Fact]
    public void A_text_longer_than_the_limit_is_refused_before_it_is_read() =>
        Assert.Equal(new SearchQueryError("filter: the text has 21 characters; the limit is 20", 20, null),
            Refuse("amount > 5 or ###### ", new SearchQueryOptions { MaxLength = 20 }));

    [Fact]
    public void Predicates_past_the_limit_are_refused_at_the_first_one_too_many()
    {
        var limits = new SearchQueryOptions { MaxPredicates = 3 };
        Assert.True(SearchQuery.ParseFilter("amount = 1 or amount = 2 or amount = 3", Catalog, limits).Succeeded);
        Assert.Equal(new SearchQueryError("filter: the filter has more than 3 predicates", 42, null),
            Refuse("amount = 1 or amount = 2 or amount = 3 or amount = 4", limits));
    }

    [Fact]
    public void Nesting_past_the_limit_is_refused_at_the_level_too_deep()
    {
        var limits = new SearchQueryOptions { MaxDepth = 3 };
        Assert.True(SearchQuery.ParseFilter("not ((urgent = true))", Catalog, limits).Succeeded);
        Assert.Equal(new SearchQueryError("filter: the filter nests deeper than 3 levels of parentheses and not", 6, null),
            Refuse("not ((not urgent = true))", limits));
    }

    [Theory]
    [InlineData("(", 100_000)]
    [InlineData("not ", 100_000)]
    public void Deep_nesting_is_refused_at_the_limit_without_exhausting_the_stack(string level, int count)
    {
        var text = string.Concat(Enumerable.Repeat(level, count)) + "urgent = true";
        var error = Refuse(text, new SearchQueryOptions { MaxLength = text.Length });
        Assert.Equal(16 * level.Length, error.Position);
    }

    [Fact]
    public void An_in_list_past_the_limit_is_refused_at_the_first_value_too_many() =>
        Assert.Equal(new SearchQueryError("filter: the in list of 'amount' has more than 2 values", 17, "amount"),
            Refuse("amount in (1, 2, 3)", new SearchQueryOptions { MaxInValues = 2 }));
}
