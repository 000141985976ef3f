using WorkflowService.Engine.Search.Query;
using static WorkflowService.UnitTests.Search.SearchTestFields;

namespace WorkflowService.UnitTests.Search;

/// <summary>What each operator, type and keyword of the filter language parses to.</summary>
public sealed class SearchFilterParsingTests
{
    [Theory]
    [InlineData("=", ComparisonOperator.Equal)]
    [InlineData("!=", ComparisonOperator.NotEqual)]
    [InlineData("<", ComparisonOperator.Less)]
    [InlineData("<=", ComparisonOperator.LessOrEqual)]
    [InlineData(">", ComparisonOperator.Greater)]
    [InlineData(">=", ComparisonOperator.GreaterOrEqual)]
    public void Every_comparison_operator_parses_on_a_number(string op, ComparisonOperator expected) =>
        Assert.Equal(new ComparisonFilter(Amount, expected, 10000m), Parse($"amount {op} 10000"));

    [Theory]
    [InlineData("amount=5")]
    [InlineData("  amount   =\t5  ")]
    [InlineData("(amount = 5)")]
    public void Whitespace_is_optional_between_tokens(string text) =>
        Assert.Equal(new ComparisonFilter(Amount, ComparisonOperator.Equal, 5m), Parse(text));

    [Theory]
    [InlineData("12", "12")]
    [InlineData("-12.50", "-12.50")]
    [InlineData("+3", "3")]
    [InlineData(".5", "0.5")]
    [InlineData("-.5", "-0.5")]
    [InlineData("1e3", "1000")]
    [InlineData("2.5E-2", "0.025")]
    [InlineData("79228162514264337593543950335", "79228162514264337593543950335")]
    public void Numbers_are_invariant_decimals_with_optional_sign_and_exponent(string written, string expected)
    {
        var comparison = Assert.IsType<ComparisonFilter>(Parse($"amount > {written}"));
        Assert.Equal(decimal.Parse(expected, System.Globalization.CultureInfo.InvariantCulture), comparison.Value);
    }

    [Theory]
    [InlineData("2026-11-01T00:00:00Z", "2026-11-01T00:00:00+00:00")]
    [InlineData("2026-11-01T01:30:00+01:30", "2026-11-01T00:00:00+00:00")]
    [InlineData("2026-11-01T00:00Z", "2026-11-01T00:00:00+00:00")]
    [InlineData("2026-11-01T01:00+01:00", "2026-11-01T00:00:00+00:00")]
    [InlineData("2026-10-31T19:00:00.1234567-05:00", "2026-11-01T00:00:00.1234567+00:00")]
    public void Datetimes_are_iso_8601_strings_with_an_offset(string written, string instant)
    {
        var comparison = Assert.IsType<ComparisonFilter>(Parse($"submittedAt >= \"{written}\""));
        Assert.Equal(DateTimeOffset.Parse(instant, System.Globalization.CultureInfo.InvariantCulture), comparison.Value);
    }

    [Theory]
    [InlineData("urgent = true", ComparisonOperator.Equal, true)]
    [InlineData("urgent != FALSE", ComparisonOperator.NotEqual, false)]
    public void Bools_take_equal_and_not_equal(string text, ComparisonOperator op, bool value) =>
        Assert.Equal(new ComparisonFilter(Urgent, op, value), Parse(text));

    [Theory]
    [InlineData("region < \"M\"", ComparisonOperator.Less)]
    [InlineData("region >= \"EU\"", ComparisonOperator.GreaterOrEqual)]
    public void Keywords_take_ranges(string text, ComparisonOperator op) =>
        Assert.Equal(op, Assert.IsType<ComparisonFilter>(Parse(text)).Operator);

    [Fact]
    public void Text_equal_keeps_the_words_as_written() =>
        Assert.Equal(new ComparisonFilter(Notes, ComparisonOperator.Equal, "Broken screen"), Parse("notes = \"Broken screen\""));

    [Theory]
    [InlineData("region startsWith \"E\"", "region", "E")]
    [InlineData("notes STARTSWITH \"scr\"", "notes", "scr")]
    public void StartsWith_takes_keyword_and_text(string text, string field, string prefix)
    {
        var filter = Assert.IsType<PrefixFilter>(Parse(text));
        Assert.Equal((field, prefix), (filter.Field.Name, filter.Prefix));
    }

    [Fact]
    public void In_lists_typed_values() =>
        Assert.Equal(new InFilter(Amount, [1m, 2.5m, -3m]), Parse("amount in (1, 2.5, -3)"));

    [Fact]
    public void In_takes_one_value() => Assert.Equal(new InFilter(Region, ["EU"]), Parse("region IN (\"EU\")"));

    [Fact]
    public void Between_is_greater_or_equal_and_less_or_equal() =>
        Assert.Equal(
            new AndFilter([
                new ComparisonFilter(Amount, ComparisonOperator.GreaterOrEqual, 10m),
                new ComparisonFilter(Amount, ComparisonOperator.LessOrEqual, 20m),
            ]),
            Parse("amount between 10 and 20"));

    [Fact]
    public void Between_inside_an_and_joins_it() =>
        Assert.Equal(3, Assert.IsType<AndFilter>(Parse("amount between 10 and 20 and urgent = true")).Items.Count);

    [Fact]
    public void And_binds_tighter_than_or()
    {
        var any = Assert.IsType<OrFilter>(Parse("region = \"EU\" or region = \"UK\" and amount > 5"));
        Assert.IsType<ComparisonFilter>(any.Items[0]);
        Assert.Equal(2, Assert.IsType<AndFilter>(any.Items[1]).Items.Count);
    }

    [Fact]
    public void Parentheses_override_precedence()
    {
        var all = Assert.IsType<AndFilter>(Parse("(region = \"EU\" or region = \"UK\") and amount > 5"));
        Assert.Equal(2, Assert.IsType<OrFilter>(all.Items[0]).Items.Count);
    }

    [Fact]
    public void Not_binds_tighter_than_and()
    {
        var all = Assert.IsType<AndFilter>(Parse("not urgent = true and amount > 5"));
        Assert.IsType<NotFilter>(all.Items[0]);
    }

    [Fact]
    public void Not_nests() =>
        Assert.Equal(new NotFilter(new NotFilter(new ComparisonFilter(Urgent, ComparisonOperator.Equal, true))), Parse("NOT not urgent = true"));

    [Theory]
    [InlineData("amount = 1 and amount = 2 and amount = 3")]
    [InlineData("(amount = 1 and amount = 2) and amount = 3")]
    [InlineData("amount = 1 and (amount = 2 and amount = 3)")]
    public void Groups_of_the_same_operator_flatten(string text) =>
        Assert.Equal(3, Assert.IsType<AndFilter>(Parse(text)).Items.Count);

    [Fact]
    public void Keywords_are_case_insensitive() =>
        Assert.Equal(Parse("not (urgent = true or amount in (1) and region startsWith \"E\")"),
            Parse("NOT (urgent = True Or amount In (1) AnD region StartsWith \"E\")"));

    [Theory]
    [InlineData("""customer = "say \"hi\"" """, "say \"hi\"")]
    [InlineData("""customer = "back\\slash" """, "back\\slash")]
    [InlineData("""customer = "" """, "")]
    [InlineData("""customer = "é 中 (and) or" """, "é 中 (and) or")]
    public void Strings_unescape_quote_and_backslash(string text, string value) =>
        Assert.Equal(value, Assert.IsType<ComparisonFilter>(Parse(text)).Value);

    [Fact]
    public void Built_in_fields_parse_as_declared_ones() =>
        Assert.True(Assert.IsType<ComparisonFilter>(Parse("status = \"running\"")).Field.BuiltIn);

    [Fact]
    public void The_first_example_is_an_and_of_three_comparisons() =>
        Assert.Equal(
            new AndFilter([
                new ComparisonFilter(Amount, ComparisonOperator.Greater, 10000m),
                new ComparisonFilter(Region, ComparisonOperator.Equal, "EU"),
                new ComparisonFilter(Status, ComparisonOperator.Equal, "running"),
            ]),
            Parse("""amount > 10000 and region = "EU" and status = "running" """));

    [Fact]
    public void The_second_example_is_one_equality() =>
        Assert.Equal(new ComparisonFilter(Customer, ComparisonOperator.Equal, "C-000123"), Parse("""customer = "C-000123" """));

    [Fact]
    public void The_third_example_is_an_in_and_a_datetime_range() =>
        Assert.Equal(
            new AndFilter([
                new InFilter(Region, ["EU", "UK"]),
                new ComparisonFilter(SubmittedAt, ComparisonOperator.GreaterOrEqual, new DateTimeOffset(2026, 11, 1, 0, 0, 0, TimeSpan.Zero)),
            ]),
            Parse("""region in ("EU", "UK") and submittedAt >= "2026-11-01T00:00:00Z" """));
}
