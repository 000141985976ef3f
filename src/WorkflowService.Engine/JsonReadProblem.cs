using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.Json.Serialization.Metadata;
using System.Text.RegularExpressions;

namespace WorkflowService.Engine;

/// <summary>
/// Why JSON text did not read as a type, in the terms of the JSON its writer sent: the path, the field, what was expected
/// there. System.Text.Json's own messages name .NET types ("could not be converted to System.String", "could not be
/// mapped to any .NET member contained in type 'WorkflowService…'"); the reason is worked out again from the type's
/// JSON contract instead. <see cref="IsSyntax"/>: the text is not JSON at all (the reader's words, which speak of JSON).
/// </summary>
public sealed partial record JsonReadProblem(string Path, string Reason, bool IsSyntax)
{
    /// <summary>The field the object at <see cref="ObjectPath"/> does not have; null for every other problem.</summary>
    public string? UnknownField { get; init; }

    /// <summary>Where the object with the unknown field is (<c>$.steps[1]</c>).</summary>
    public string? ObjectPath { get; init; }

    /// <summary>The type that object was read as, for a reader that can say more about it than its fields.</summary>
    public Type? ObjectType { get; init; }

    /// <summary>Explains <paramref name="exception"/>, thrown while reading JSON text as <paramref name="root"/>.</summary>
    /// <param name="describe">What the reader's caller calls a value of a type, where its fields alone would mislead (null: ask the contract).</param>
    public static JsonReadProblem Explain(JsonException exception, Type? root, JsonSerializerOptions options, Func<Type, string?>? describe = null)
    {
        ArgumentNullException.ThrowIfNull(exception);
        ArgumentNullException.ThrowIfNull(options);
        var path = string.IsNullOrEmpty(exception.Path) ? "$" : exception.Path;
        if (exception.InnerException is JsonException syntax)
        {
            // The reader's own words are about the JSON text; only its position suffix is restated.
            var where = exception.LineNumber is { } line && exception.BytePositionInLine is { } position
                ? $" (line {line + 1}, byte {position + 1})"
                : "";
            return new JsonReadProblem(path, PositionSuffix().Replace(syntax.Message, "").TrimEnd('.') + where, IsSyntax: true);
        }

        if (root is null)
        {
            return new JsonReadProblem(path, "the value is not of the kind expected here", IsSyntax: false);
        }

        if (FindUnknownField(root, path, options) is { } unknown)
        {
            return new JsonReadProblem(path, unknown.Reason, IsSyntax: false)
            {
                UnknownField = unknown.Name, ObjectPath = unknown.ObjectPath, ObjectType = unknown.ObjectType,
            };
        }

        return new JsonReadProblem(path, TypeAt(root, path, options) is { } expected
            ? $"expected {Expected(expected, options, describe)}"
            : "the value is not of the kind expected here", IsSyntax: false);
    }

    /// <summary>What a value of <paramref name="type"/> looks like in JSON or in a query string, in the client's terms.</summary>
    public static string Expected(Type type, JsonSerializerOptions options, Func<Type, string?>? describe = null)
    {
        ArgumentNullException.ThrowIfNull(type);
        ArgumentNullException.ThrowIfNull(options);
        type = Nullable.GetUnderlyingType(type) ?? type;
        if (describe?.Invoke(type) is { } described)
        {
            return described;
        }

        if (type.IsEnum)
        {
            return "one of " + string.Join(", ", Enum.GetNames(type));
        }

        if (type == typeof(string) || type == typeof(char))
        {
            return "a string";
        }

        if (type == typeof(bool))
        {
            return "true or false";
        }

        if (type == typeof(int) || type == typeof(long) || type == typeof(short))
        {
            var (min, max) = type == typeof(int) ? (int.MinValue, int.MaxValue)
                : type == typeof(short) ? (short.MinValue, short.MaxValue)
                : (long.MinValue, long.MaxValue);
            return $"a whole number from {min} to {max}";
        }

        if (type == typeof(double) || type == typeof(float) || type == typeof(decimal))
        {
            return "a number";
        }

        if (type == typeof(Guid))
        {
            return "a UUID such as 3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        }

        if (type == typeof(DateTimeOffset) || type == typeof(DateTime))
        {
            return "a date and time in ISO 8601 form such as 2030-01-31T09:30:00Z";
        }

        if (type == typeof(JsonElement) || type == typeof(JsonNode) || type == typeof(JsonValue))
        {
            return "a JSON value";
        }

        if (type == typeof(JsonObject))
        {
            return "a JSON object";
        }

        if (type == typeof(JsonArray))
        {
            return "a JSON array";
        }

        var info = options.GetTypeInfo(type);
        return info.Kind switch
        {
            JsonTypeInfoKind.Object => info.Properties.Count == 0
                ? "a JSON object"
                : "a JSON object with the fields " + string.Join(", ", info.Properties.Select(p => p.Name)),
            JsonTypeInfoKind.Dictionary => $"a JSON object whose every value is {Expected(info.ElementType!, options, describe)}",
            JsonTypeInfoKind.Enumerable => $"a JSON array whose every item is {Expected(info.ElementType!, options, describe)}",
            _ => "a different kind of JSON value",
        };
    }

    /// <summary>
    /// When <paramref name="path"/> ends in a field its object does not have (the options refuse unmapped members): which
    /// field, and the fields that object has.
    /// </summary>
    private static (string Reason, string Name, string ObjectPath, Type ObjectType)? FindUnknownField(Type root, string path, JsonSerializerOptions options)
    {
        var segments = PathSegment().Matches(path);
        if (segments.Count == 0 || segments[^1].Groups["name"] is not { Success: true } name)
        {
            return null;
        }

        var parentPath = path[..segments[^1].Index];
        if (TypeAt(root, parentPath, options) is not { } parent || IsJsonValue(parent)
            || options.GetTypeInfo(parent) is not { Kind: JsonTypeInfoKind.Object } info
            || info.Properties.Any(p => string.Equals(p.Name, name.Value,
                options.PropertyNameCaseInsensitive ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal)))
        {
            return null;
        }

        var objectPath = parentPath.Length == 0 ? "$" : parentPath;
        return ($"unknown field '{name.Value}' at {objectPath}; expected one of: " + string.Join(", ", info.Properties.Select(p => p.Name)),
            name.Value, objectPath, parent);
    }

    /// <summary>The value at a System.Text.Json path (<c>$.a.b[0]['c']</c>) in <paramref name="root"/>; null where there is none.</summary>
    public static JsonNode? NodeAt(JsonNode? root, string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var current = root;
        foreach (Match segment in PathSegment().Matches(path))
        {
            current = (current, segment.Groups["name"], segment.Groups["index"]) switch
            {
                (JsonObject obj, { Success: true } name, _) => obj[name.Value],
                (JsonArray array, _, { Success: true } index) when int.TryParse(index.Value, CultureInfo.InvariantCulture, out var i) && i < array.Count
                    => array[i],
                _ => null,
            };
        }

        return current;
    }

    /// <summary>The type of the value at a System.Text.Json path (<c>$.a.b[0]['c']</c>) in <paramref name="root"/>.</summary>
    private static Type? TypeAt(Type root, string path, JsonSerializerOptions options)
    {
        var current = root;
        foreach (Match segment in PathSegment().Matches(path))
        {
            current = Nullable.GetUnderlyingType(current) ?? current;
            if (IsJsonValue(current))
            {
                return current;
            }

            var info = options.GetTypeInfo(current);
            var name = segment.Groups["name"];
            Type? next = (info.Kind, name.Success) switch
            {
                (JsonTypeInfoKind.Enumerable, false) => info.ElementType,
                (JsonTypeInfoKind.Dictionary, true) => info.ElementType,
                (JsonTypeInfoKind.Object, true) => info.Properties
                    .FirstOrDefault(p => string.Equals(p.Name, name.Value, StringComparison.OrdinalIgnoreCase))?.PropertyType,
                _ => null,
            };
            if (next is null)
            {
                return null;
            }

            current = next;
        }

        return current;
    }

    /// <summary>Free-form JSON, which any value reads as: nothing below it has a contract.</summary>
    private static bool IsJsonValue(Type type) => type == typeof(JsonElement) || typeof(JsonNode).IsAssignableFrom(type);

    [GeneratedRegex(@"\.(?<name>[^.\[]+)|\['(?<name>(?:[^'\\]|\\.)*)'\]|\[(?<index>\d+)\]")]
    private static partial Regex PathSegment();

    [GeneratedRegex(@"\s*(Path: .*?\|\s*)?LineNumber: \d+ \| BytePositionInLine: \d+\.?\s*$")]
    private static partial Regex PositionSuffix();
}
