using System.Text.Json;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Api;

/// <summary>
/// The list's <c>filter</c> and <c>orderBy</c> read against the caller's tenant's fields (its declared search attributes
/// and the instance's own), each refusal a 400 naming the parameter, the field and what it takes.
/// </summary>
internal static class InstanceSearch
{
    /// <summary>What a search asks for: the filter and the order, either null when not given.</summary>
    public sealed record Request(SearchFilter? Filter, SearchOrder? Order);

    public static async Task<(Request? Request, ValidationProblem? Problem)> ReadAsync(ISearchAttributeStore store, SearchQueryOptions limits,
        string tenant, string? filter, string? orderBy, CancellationToken cancellationToken)
    {
        if (filter is null && orderBy is null)
        {
            return (new Request(null, null), null);
        }

        var fields = TenantSearchFields.Of(await store.GetSearchAttributesAsync(tenant, cancellationToken));
        SearchFilter? parsedFilter = null;
        if (filter is not null)
        {
            var parsed = SearchQuery.ParseFilter(filter, fields, limits);
            if (!parsed.Succeeded)
            {
                return (null, Invalid("filter", parsed.Error));
            }

            if (UnknownStatus(parsed.Value) is { } status)
            {
                return (null, Invalid("filter", new SearchQueryError(
                    $"'status' is one of {string.Join(", ", Enum.GetNames<InstanceStatus>().Select(n => $"\"{n.ToLowerInvariant()}\""))}; \"{status}\" is not",
                    0, "status")));
            }

            parsedFilter = parsed.Value;
        }

        SearchOrder? order = null;
        if (orderBy is not null)
        {
            var parsed = SearchQuery.ParseOrder(orderBy, fields, limits);
            if (!parsed.Succeeded)
            {
                return (null, Invalid("orderBy", parsed.Error));
            }

            // One field, indexed: createdAt (the list's own order) or a search attribute (its slot's index).
            if (parsed.Value is not [var only] || (only.Field.BuiltIn && only.Field.Name != "createdAt"))
            {
                return (null, Invalid("orderBy", new SearchQueryError(
                    "orderBy takes one field: createdAt or a search attribute, with asc or desc", 0, parsed.Value.Count > 0 ? parsed.Value[0].Field.Name : null)));
            }

            order = only;
        }

        return (new Request(parsedFilter, order), null);
    }

    /// <summary>The cursor after <paramref name="instance"/> in a list sorted by <paramref name="order"/>.</summary>
    public static string Cursor(WorkflowInstance instance, SearchOrder? order) =>
        IsDefaultOrder(order)
            ? ListCursor.Encode(InstancePosition.Of(instance))
            : ListCursor.EncodeSorted(order!, order!.Field.BuiltIn
                ? instance.CreatedAt
                : instance.SearchAttributes?.FirstOrDefault(v => v.Name == order.Field.Name)?.Value, instance.Id);

    /// <summary>The position a cursor names in a list sorted by <paramref name="order"/>; null when it is not one of that list's cursors.</summary>
    public static InstancePosition? Position(string after, SearchOrder? order) =>
        IsDefaultOrder(order) ? ListCursor.Decode(after) : ListCursor.DecodeSorted(after, order!);

    /// <summary>Newest first: the list's own order, whose cursor is the one it always had.</summary>
    private static bool IsDefaultOrder(SearchOrder? order) => order is null or { Field: { BuiltIn: true, Name: "createdAt" }, Descending: true };

    /// <summary>An instance's attribute values as the API shows them; null when it has none.</summary>
    public static Dictionary<string, JsonElement>? View(IReadOnlyList<SearchAttributeValue>? values)
    {
        if (values is not { Count: > 0 })
        {
            return null;
        }

        // One JSON object written and read back, its properties the values: one document for all, not one each.
        var buffer = new System.Buffers.ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            foreach (var value in values)
            {
                switch (value.Value)
                {
                    case null:
                        continue;
                    case string text:
                        writer.WriteString(value.Name, text);
                        break;
                    case decimal number:
                        writer.WriteNumber(value.Name, number);
                        break;
                    case bool flag:
                        writer.WriteBoolean(value.Name, flag);
                        break;
                    case DateTime at:
                        writer.WriteString(value.Name, at);
                        break;
                    case var other:
                        writer.WritePropertyName(value.Name);
                        JsonSerializer.Serialize(writer, other, other.GetType());
                        break;
                }
            }

            writer.WriteEndObject();
        }

        var reader = new Utf8JsonReader(buffer.WrittenSpan);
        var view = new Dictionary<string, JsonElement>(values.Count, StringComparer.Ordinal);
        foreach (var property in JsonElement.ParseValue(ref reader).EnumerateObject())
        {
            view[property.Name] = property.Value;
        }

        return view;
    }

    private static ValidationProblem Invalid(string parameter, SearchQueryError error)
    {
        var extensions = new Dictionary<string, object?> { ["position"] = error.Position };
        if (error.Field is { } field)
        {
            extensions["attribute"] = field;
        }

        return TypedResults.ValidationProblem(new Dictionary<string, string[]> { [parameter] = [error.Message] }, detail: error.Message,
            title: "The request is not valid", extensions: extensions);
    }

    /// <summary>A status value in the filter that names no status (the others are matched ignoring case).</summary>
    private static string? UnknownStatus(SearchFilter filter) => filter switch
    {
        AndFilter and => and.Items.Select(UnknownStatus).FirstOrDefault(s => s is not null),
        OrFilter or => or.Items.Select(UnknownStatus).FirstOrDefault(s => s is not null),
        NotFilter not => UnknownStatus(not.Inner),
        ComparisonFilter { Field: { BuiltIn: true, Name: "status" }, Value: string value } => IsStatus(value) ? null : value,
        InFilter { Field: { BuiltIn: true, Name: "status" } } @in => @in.Values.OfType<string>().FirstOrDefault(v => !IsStatus(v)),
        _ => null,
    };

    private static bool IsStatus(string value) => Enum.TryParse<InstanceStatus>(value, ignoreCase: true, out var status) && Enum.IsDefined(status) && !int.TryParse(value, out _);
}
