using System.Globalization;
using System.Text.Json;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>
/// Evaluates a definition's search attributes at the end of a run, against the variables it leaves. A value the
/// expression cannot give in the attribute's type (it fails, gives null, or another type) leaves the attribute empty: a
/// search attribute never fails the run it describes.
/// </summary>
public static class SearchAttributeEvaluation
{
    /// <summary>
    /// The values of the attributes whose expression reads what <paramref name="due"/> says may have changed; null when
    /// there is none (the commit then leaves every stored value as it is).
    /// </summary>
    public static IReadOnlyList<SearchAttributeValue>? Evaluate(IReadOnlyList<SearchAttribute> attributes, ExpressionScope scope,
        Func<ExpressionReads, bool> due)
    {
        ArgumentNullException.ThrowIfNull(attributes);
        ArgumentNullException.ThrowIfNull(scope);
        ArgumentNullException.ThrowIfNull(due);
        List<SearchAttributeValue>? values = null;
        foreach (var attribute in attributes)
        {
            if (!due(attribute.Value.Reads))
            {
                continue;
            }

            object? plain;
            try
            {
                plain = scope.EvaluateToPlain(attribute.Value);
            }
            catch (Exception e) when (e is ExpressionFailedException or ScopeLoadException or RunBudgetExceededException)
            {
                plain = null;
            }

            (values ??= new List<SearchAttributeValue>(attributes.Count))
                .Add(new SearchAttributeValue(attribute.Name, attribute.Type, FromPlain(attribute.Type, plain)));
        }

        return values;
    }

    /// <summary>
    /// A plain value (<see cref="ExpressionScope.EvaluateToPlain"/>) as a value of <paramref name="type"/>, or null when it
    /// is not one: what <see cref="FromJson"/> makes of the value's JSON text, without writing and reading it.
    /// </summary>
    public static object? FromPlain(SearchValueType type, object? plain) => (type, plain) switch
    {
        (_, null) => null,
        (_, JsonText json) => FromJson(type, json.Json),
        (SearchValueType.Keyword, string text) => Cut(text, SearchSlots.MaxKeywordLength),
        (SearchValueType.Text, string text) => Cut(text, SearchSlots.MaxTextLength),
        (SearchValueType.DateTime, string text) => Instant(text),
        // JSON writes a number as JavaScript writes it, and NaN and the infinities as null.
        (SearchValueType.Keyword, double number) => double.IsFinite(number) ? Jint.Runtime.TypeConverter.ToString(number) : null,
        (SearchValueType.Number, double number) => double.IsFinite(number)
            && decimal.TryParse(Jint.Runtime.TypeConverter.ToString(number), NumberStyles.Float, CultureInfo.InvariantCulture, out var value)
                ? value
                : null,
        (SearchValueType.Bool, bool flag) => flag,
        _ => null,
    };

    /// <summary>A JSON value as a value of <paramref name="type"/>, or null when it is not one.</summary>
    public static object? FromJson(SearchValueType type, string json)
    {
        using var document = JsonDocument.Parse(json);
        var value = document.RootElement;
        return (type, value.ValueKind) switch
        {
            (SearchValueType.Keyword, JsonValueKind.String) => Cut(value.GetString()!, SearchSlots.MaxKeywordLength),
            (SearchValueType.Keyword, JsonValueKind.Number) => value.GetRawText(),
            (SearchValueType.Text, JsonValueKind.String) => Cut(value.GetString()!, SearchSlots.MaxTextLength),
            (SearchValueType.Number, JsonValueKind.Number) => value.TryGetDecimal(out var number) ? number : null,
            (SearchValueType.DateTime, JsonValueKind.String) => Instant(value.GetString()!),
            (SearchValueType.Bool, JsonValueKind.True) => true,
            (SearchValueType.Bool, JsonValueKind.False) => false,
            _ => null,
        };
    }

    // ISO 8601 with the full date: what JSON.stringify gives a Date, and what a client sends. A string without its date
    // ('10:00', 'Jan 5') is not an instant: .NET would fill the rest from the machine's clock.
    private static readonly string[] InstantFormats =
    [
        "yyyy-MM-dd", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFF",
        "yyyy-MM-dd'T'HH:mmK", "yyyy-MM-dd'T'HH:mm:ssK", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFFK",
    ];

    private static DateTime? Instant(string text) =>
        DateTimeOffset.TryParseExact(text, InstantFormats, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var at)
            ? at.UtcDateTime
            : null;

    private static string Cut(string text, int max) => text.Length <= max ? text : text[..max];
}
