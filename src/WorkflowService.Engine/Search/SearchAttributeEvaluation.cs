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
public static partial class SearchAttributeEvaluation
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
        JsonDocument? variables = null;
        JsonDocument? input = null;
        try
        {
            foreach (var attribute in attributes)
            {
                if (!due(attribute.Value.Reads))
                {
                    continue;
                }

                object? value;
                try
                {
                    value = FromPlain(attribute.Type, PlainOf(attribute.Value, scope, ref variables, ref input));
                }
                catch (Exception e) when (e is ExpressionFailedException or ScopeLoadException or RunBudgetExceededException)
                {
                    value = null;
                }

                (values ??= new List<SearchAttributeValue>(attributes.Count)).Add(new SearchAttributeValue(attribute.Name, attribute.Type, value));
            }
        }
        finally
        {
            variables?.Dispose();
            input?.Dispose();
        }

        return values;
    }

    /// <summary>
    /// The expression's plain value: read from the variables' and input's JSON when it is a path into them and no engine
    /// is built yet (an attribute of plain paths builds none), else evaluated in the engine.
    /// </summary>
    private static object? PlainOf(CompiledExpression expression, ExpressionScope scope, ref JsonDocument? variables, ref JsonDocument? input)
    {
        if (expression.DataPath is { } path && scope.DataText is { } text)
        {
            try
            {
                // Only what the path reads, once for all the attributes.
                if (path.ReadsVariables)
                {
                    variables ??= JsonDocument.Parse(text.Variables);
                }

                if (path.ReadsInput && text.Input is not null)
                {
                    input ??= JsonDocument.Parse(text.Input);
                }
            }
            catch (Exception e) when (e is JsonException or ArgumentException)
            {
                // Text the reader refuses (ArgumentException: not well-formed UTF-16): the engine reads it, or fails to,
                // as it always did.
                return scope.EvaluateToPlain(expression);
            }

            var read = path.Evaluate(variables?.RootElement ?? default, input?.RootElement);
            switch (read.Outcome)
            {
                case DataPathOutcome.Value:
                    return read.Value;
                case DataPathOutcome.Throws:
                    // A member of null or undefined: the expression throws, and the attribute is empty.
                    return null;
            }
        }

        return scope.EvaluateToPlain(expression);
    }

    /// <summary>
    /// A plain value (<see cref="ExpressionScope.EvaluateToPlain"/>) as a value of <paramref name="type"/>, or null when it
    /// is not one: what <see cref="FromJson"/> makes of the value's JSON text, without writing and reading it.
    /// </summary>
    public static object? FromPlain(SearchValueType type, object? plain) => (type, plain) switch
    {
        (_, null) => null,
        (_, JsonText json) => FromJson(type, json.Json),
        (SearchValueType.Keyword, string text) => Text(text, SearchSlots.MaxKeywordLength),
        (SearchValueType.Text, string text) => Text(text, SearchSlots.MaxTextLength),
        (SearchValueType.DateTime, string text) => Instant(text),
        // JSON writes a number as JavaScript writes it, and NaN and the infinities as null.
        (SearchValueType.Keyword, double number) => double.IsFinite(number) ? Jint.Runtime.TypeConverter.ToString(number) : null,
        // A whole number JavaScript writes with all its digits is that decimal: no text written and read back.
        (SearchValueType.Number, double number) when Math.Abs(number) < WholeExactly && Math.Floor(number) == number => (decimal)(long)number,
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
            (SearchValueType.Keyword, JsonValueKind.String) => Text(String(value), SearchSlots.MaxKeywordLength),
            (SearchValueType.Keyword, JsonValueKind.Number) => value.GetRawText(),
            (SearchValueType.Text, JsonValueKind.String) => Text(String(value), SearchSlots.MaxTextLength),
            (SearchValueType.Number, JsonValueKind.Number) => value.TryGetDecimal(out var number) ? number : null,
            (SearchValueType.DateTime, JsonValueKind.String) => String(value) is { } text ? Instant(text) : null,
            (SearchValueType.Bool, JsonValueKind.True) => true,
            (SearchValueType.Bool, JsonValueKind.False) => false,
            _ => null,
        };
    }

    /// <summary>
    /// ISO 8601 with its full date: what JSON.stringify gives a Date, and what clients send (a space for the T, up to
    /// nine digits of a second, an offset as <c>Z</c>, <c>+01</c>, <c>+0100</c> or <c>+01:00</c>; without one, UTC). A
    /// string without its date (<c>'10:00'</c>, <c>'Jan 5'</c>) is no instant: .NET would fill the rest from the clock.
    /// </summary>
    internal static DateTime? Instant(string text)
    {
        if (UtcInstant(text) is { } utc)
        {
            return utc;
        }

        var match = IsoInstant().Match(text.Trim());
        if (!match.Success)
        {
            return null;
        }

        var fraction = (match.Groups["f"].Value + "0000000")[..7];
        var zone = match.Groups["z"].Value switch
        {
            "" or "Z" => "+00:00",
            { Length: 3 } hours => hours + ":00",
            { Length: 5 } compact => compact[..3] + ":" + compact[3..],
            var full => full,
        };
        var time = match.Groups["t"].Success ? match.Groups["t"].Value : "00:00";
        var seconds = match.Groups["s"].Success ? match.Groups["s"].Value : "00";
        return DateTimeOffset.TryParseExact($"{match.Groups["d"].Value}T{time}:{seconds}.{fraction}{zone}", "yyyy-MM-dd'T'HH:mm:ss.fffffffzzz",
            CultureInfo.InvariantCulture, DateTimeStyles.None, out var at)
            ? at.UtcDateTime
            : null;
    }

    /// <summary>Below it, every whole double is written by JavaScript with all its digits, and a long holds it.</summary>
    private const double WholeExactly = 1e15;

    /// <summary>
    /// The common shape, <c>yyyy-MM-ddTHH:mm:ss[.fffffff]Z</c> (what JSON.stringify gives a Date), read by one exact parse
    /// without the regular expression; null for any other text (<see cref="Instant"/> then reads it as before, an eighth
    /// or ninth digit of a second included). A dot needs a digit after it, as there.
    /// </summary>
    private static DateTime? UtcInstant(string text) =>
        !text.EndsWith(".Z", StringComparison.Ordinal)
        && DateTime.TryParseExact(text, UtcShapes, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal,
            out var at)
            ? at
            : null;

    private static readonly string[] UtcShapes = ["yyyy-MM-dd'T'HH:mm:ss'Z'", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFF'Z'"];

    [System.Text.RegularExpressions.GeneratedRegex(@"^(?<d>\d{4}-\d{2}-\d{2})(?:[T ](?<t>\d{2}:\d{2})(?::(?<s>\d{2})(?:\.(?<f>\d{1,9}))?)?)?(?<z>Z|[+-]\d{2}(?::?\d{2})?)?$",
        System.Text.RegularExpressions.RegexOptions.CultureInvariant | System.Text.RegularExpressions.RegexOptions.ExplicitCapture)]
    private static partial System.Text.RegularExpressions.Regex IsoInstant();

    /// <summary>A JSON string's text; null when it holds a lone surrogate (escaped), which is no text a store keeps.</summary>
    private static string? String(JsonElement value)
    {
        try
        {
            return value.GetString();
        }
        catch (InvalidOperationException)
        {
            return null;
        }
    }

    /// <summary>
    /// Text cut to <paramref name="max"/> characters, never between the two halves of a pair; null when it is not
    /// well-formed UTF-16 (a lone surrogate, which no store keeps as it is).
    /// </summary>
    private static string? Text(string? text, int max)
    {
        if (text is null || !WellFormed(text))
        {
            return null;
        }

        if (text.Length <= max)
        {
            return text;
        }

        return char.IsHighSurrogate(text[max - 1]) ? text[..(max - 1)] : text[..max];
    }

    private static bool WellFormed(string text)
    {
        for (var i = 0; i < text.Length; i++)
        {
            if (char.IsHighSurrogate(text[i]))
            {
                if (i + 1 == text.Length || !char.IsLowSurrogate(text[i + 1]))
                {
                    return false;
                }

                i++;
            }
            else if (char.IsLowSurrogate(text[i]))
            {
                return false;
            }
        }

        return true;
    }
}
