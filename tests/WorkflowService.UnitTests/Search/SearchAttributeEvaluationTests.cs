using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Search;

/// <summary>What an attribute's expression gives, as the value its type stores: a value of another type leaves it empty.</summary>
public sealed class SearchAttributeEvaluationTests
{
    public static TheoryData<SearchValueType, string, object?> Values => new()
    {
        { SearchValueType.Keyword, "\"EU\"", "EU" },
        { SearchValueType.Keyword, "42", "42" },
        { SearchValueType.Keyword, "true", null },
        { SearchValueType.Keyword, "{\"a\":1}", null },
        { SearchValueType.Text, "\"a long note\"", "a long note" },
        { SearchValueType.Text, "3", null },
        { SearchValueType.Number, "12000.5", 12000.5m },
        { SearchValueType.Number, "\"12000\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00+01:00\"", new DateTime(2026, 11, 1, 9, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00Z\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.125Z\"", new DateTime(2026, 11, 1, 10, 0, 0, 125, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01\"", new DateTime(2026, 11, 1, 0, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.123456789Z\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc).AddTicks(1234567) },
        { SearchValueType.DateTime, "\"2026-11-01 10:00:00+00:00\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T11:00:00+01\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T11:00+0100\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-13-01\"", null },
        // The common shape is read without the regular expression: the same values, and the same refusals.
        { SearchValueType.DateTime, "\"2024-02-29T23:59:59.9999999Z\"", new DateTime(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc).AddTicks(9_999_999) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.1Z\"", new DateTime(2026, 11, 1, 10, 0, 0, 100, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.12345678Z\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc).AddTicks(1234567) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.5+00:00\"", new DateTime(2026, 11, 1, 10, 0, 0, 500, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00z\"", null },
        { SearchValueType.DateTime, "\"0001-01-01T00:00:00Z\"", new DateTime(1, 1, 1, 0, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"2026-02-29T10:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-31T10:00:00Z\"", null },
        { SearchValueType.DateTime, "\"0000-01-01T00:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T24:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:60:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:60Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.1234567890Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00,5Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T1a:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-1-01T10:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T1:00:00Z\"", null },
        { SearchValueType.DateTime, "\"26-11-01T10:00:00Z\"", null },
        { SearchValueType.DateTime, "\"02026-11-01T10:00:00Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00.+1Z\"", null },
        { SearchValueType.DateTime, "\"2026-11-01T10:00:00Z \"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\" 2026-11-01T10:00:00Z\"", new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc) },
        { SearchValueType.DateTime, "\"soon\"", null },
        // Without its date a time is not an instant (.NET would take the date from the machine's clock).
        { SearchValueType.DateTime, "\"10:00\"", null },
        { SearchValueType.DateTime, "\"Jan 5\"", null },
        { SearchValueType.DateTime, "\"11/01/2026\"", null },
        { SearchValueType.Bool, "false", false },
        { SearchValueType.Bool, "\"true\"", null },
        { SearchValueType.Number, "null", null },
    };

    [Theory]
    [MemberData(nameof(Values))]
    public void A_json_value_becomes_a_value_of_the_type_or_nothing(SearchValueType type, string json, object? expected)
    {
        var value = SearchAttributeEvaluation.FromJson(type, json);

        Assert.Equal(expected, value);
        if (value is DateTime at)
        {
            Assert.Equal(DateTimeKind.Utc, at.Kind);
        }
    }

    [Theory]
    [InlineData(SearchValueType.Keyword)]
    [InlineData(SearchValueType.Text)]
    public void Text_that_is_not_well_formed_leaves_the_attribute_empty_and_a_cut_never_splits_a_pair(SearchValueType type)
    {
        var max = type == SearchValueType.Keyword ? SearchSlots.MaxKeywordLength : SearchSlots.MaxTextLength;

        Assert.Null(SearchAttributeEvaluation.FromPlain(type, "a\uD800b"));
        Assert.Null(SearchAttributeEvaluation.FromJson(type, "\"a\\uDC00\""));
        var cut = (string)SearchAttributeEvaluation.FromPlain(type, new string('x', max - 1) + "\uD83D\uDE00")!;
        Assert.Equal(new string('x', max - 1), cut);
        Assert.Equal(cut, SearchAttributeEvaluation.FromJson(type, $"\"{new string('x', max - 1)}\\uD83D\\uDE00\""));
    }

    [Fact]
    public void Keywords_and_texts_longer_than_their_columns_are_cut()
    {
        Assert.Equal(SearchSlots.MaxKeywordLength, ((string)SearchAttributeEvaluation.FromJson(SearchValueType.Keyword, $"\"{new string('k', 500)}\"")!).Length);
        Assert.Equal(SearchSlots.MaxTextLength, ((string)SearchAttributeEvaluation.FromJson(SearchValueType.Text, $"\"{new string('t', 5000)}\"")!).Length);
    }

    public static TheoryData<string> Expressions => new()
    {
        "'EU'", "''", "'2026-11-01T10:00:00Z'", "'2026-11-01'", "'10:00'", "'true'", "'42'",
        "0", "-0", "42", "-42", "999999999999999", "-999999999999999", "1000000000000000", "1.5", "0.1 + 0.2", "1e21", "1e-7", "123456789012345680000", "7.9e28", "1e29", "-1e300",
        "NaN", "Infinity", "-Infinity", "2 ** 53 + 1",
        "true", "false", "null", "undefined",
        "[1, 2]", "({ a: 1 })", "new Date(Date.UTC(2026, 0, 5))", "new String('x')", "new Number(3)", "new Boolean(false)",
        "String.fromCharCode(0xD800)", "'a' + String.fromCharCode(0xDC00)", "new String(String.fromCharCode(0xD800))",
        "'x'.repeat(199) + '\\uD83D\\uDE00'", "'x'.repeat(999) + '\\uD83D\\uDE00'", "'\\uD83D\\uDE00'",
    };

    [Theory]
    [MemberData(nameof(Expressions))]
    public void A_plain_value_becomes_what_its_json_text_becomes_for_every_type(string source)
    {
        var runtime = new WorkflowService.Engine.Expressions.ExpressionRuntime(
            Microsoft.Extensions.Options.Options.Create(new WorkflowService.Engine.Expressions.ExpressionOptions()), TimeProvider.System);
        var expression = runtime.Compile(source);
        foreach (var type in Enum.GetValues<SearchValueType>())
        {
            var json = runtime.OpenScope("{}", null, null, () => "null").EvaluateToJson(expression);
            var plain = runtime.OpenScope("{}", null, null, () => "null").EvaluateToPlain(expression);

            Assert.Equal(SearchAttributeEvaluation.FromJson(type, json), SearchAttributeEvaluation.FromPlain(type, plain));
        }
    }
}
