using System.Globalization;

namespace WorkflowService.Engine.Search.Query;

/// <summary>Which operators each type takes, and how a token becomes a value of a type.</summary>
internal static class SearchTypeRules
{
    private static readonly string[] DateTimeFormats =
    [
        "yyyy-MM-dd'T'HH:mmzzz", "yyyy-MM-dd'T'HH:mm:sszzz", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFFzzz",
    ];

    /// <summary>"a number", "text": what a field of the type is, after "'amount' is".</summary>
    public static string Describe(SearchValueType type) => type switch
    {
        SearchValueType.Keyword => "a keyword",
        SearchValueType.Text => "text",
        SearchValueType.Number => "a number",
        SearchValueType.DateTime => "a datetime",
        _ => "a bool",
    };

    /// <summary>Whether a field of <paramref name="type"/> takes <paramref name="op"/> (=, &lt;, in, startsWith, between…).</summary>
    public static bool Takes(SearchValueType type, string op) => type switch
    {
        SearchValueType.Keyword => true,
        SearchValueType.Text => op is "=" or "startsWith",
        SearchValueType.Number or SearchValueType.DateTime => op != "startsWith",
        _ => op is "=" or "!=",
    };

    public static string Operators(SearchValueType type) => type switch
    {
        SearchValueType.Keyword => "=, !=, <, <=, >, >=, between, in and startsWith",
        SearchValueType.Text => "= and startsWith",
        SearchValueType.Number or SearchValueType.DateTime => "=, !=, <, <=, >, >=, between and in",
        _ => "= and !=",
    };

    /// <summary>The token as a value of the field's type, or why it is not one.</summary>
    public static SearchQueryError? ReadValue(SearchTokenReader reader, SearchField field, out object value)
    {
        var token = reader.Peek;
        value = null!;
        if (token.Kind is not (SearchTokenKind.String or SearchTokenKind.Number) && !token.Is("true") && !token.Is("false"))
        {
            return reader.Expected("a value");
        }

        reader.Take();
        object? read = field.Type switch
        {
            SearchValueType.Keyword or SearchValueType.Text => token.Unescaped,
            SearchValueType.Number => Number(token),
            SearchValueType.DateTime => DateTime(token),
            _ => token.Kind == SearchTokenKind.Name ? token.Is("true") : null,
        };
        if (read is null)
        {
            return reader.Error($"'{field.Name}' is {Describe(field.Type)}; {token.Text} is not {Expected(field.Type, token)}", token, field.Name);
        }

        value = read;
        return null;
    }

    private static string Expected(SearchValueType type, SearchToken token) => type switch
    {
        SearchValueType.Keyword or SearchValueType.Text => "a string in double quotes",
        SearchValueType.Number => token.Kind == SearchTokenKind.Number ? "a number within ±7.9e28" : "a number",
        SearchValueType.DateTime => "an ISO 8601 date and time with an offset, such as \"2026-11-01T00:00:00Z\"",
        _ => "true or false",
    };

    private static decimal? Number(SearchToken token) =>
        token.Kind == SearchTokenKind.Number
        && decimal.TryParse(token.Text, NumberStyles.Float, CultureInfo.InvariantCulture, out var number) ? number : null;

    private static DateTimeOffset? DateTime(SearchToken token)
    {
        if (token.Unescaped is not { } text)
        {
            return null;
        }

        var offsetText = text.EndsWith('Z') ? text[..^1] + "+00:00" : text;
        return DateTimeOffset.TryParseExact(offsetText, DateTimeFormats, CultureInfo.InvariantCulture, DateTimeStyles.None, out var instant)
            ? instant
            : null;
    }
}
