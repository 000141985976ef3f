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
    public static IReadOnlyList<SearchAttributeValue> Evaluate(IReadOnlyList<SearchAttribute> attributes, ExpressionScope scope)
    {
        ArgumentNullException.ThrowIfNull(attributes);
        ArgumentNullException.ThrowIfNull(scope);
        var values = new SearchAttributeValue[attributes.Count];
        for (var i = 0; i < attributes.Count; i++)
        {
            var attribute = attributes[i];
            string? json;
            try
            {
                json = scope.EvaluateToJson(attribute.Value);
            }
            catch (Exception e) when (e is ExpressionFailedException or ScopeLoadException or RunBudgetExceededException)
            {
                json = null;
            }

            values[i] = new SearchAttributeValue(attribute.Name, attribute.Type, json is null ? null : FromJson(attribute.Type, json));
        }

        return values;
    }

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
            (SearchValueType.DateTime, JsonValueKind.String) =>
                DateTimeOffset.TryParse(value.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var at) ? at.UtcDateTime : null,
            (SearchValueType.Bool, JsonValueKind.True) => true,
            (SearchValueType.Bool, JsonValueKind.False) => false,
            _ => null,
        };
    }

    private static string Cut(string text, int max) => text.Length <= max ? text : text[..max];
}
