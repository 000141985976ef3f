using System.Data.Common;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.Relational;

/// <summary>A search attribute value as a commit writes it: its slot column and the value to bind (a typed null when empty).</summary>
internal readonly record struct SearchColumn(string Slot, object Value)
{
    /// <summary>
    /// The columns of <paramref name="values"/> in <paramref name="declared"/>'s slots; a value whose name has no slot (it
    /// cannot be: a definition's attributes are declared before it is stored) is left out.
    /// </summary>
    public static List<SearchColumn> Of(IReadOnlyList<SearchAttributeValue> values, IReadOnlyDictionary<string, DeclaredSearchAttribute> declared)
    {
        var columns = new List<SearchColumn>(values.Count);
        foreach (var value in values)
        {
            if (declared.TryGetValue(value.Name, out var attribute) && attribute.Type == value.Type)
            {
                columns.Add(new SearchColumn(attribute.Slot, ToDatabase(value.Type, value.Value)));
            }
        }

        return columns;
    }

    /// <summary>
    /// A value of <paramref name="type"/> as its slot column takes it (numbers as doubles, times as UTC DateTime), or the
    /// slot type's typed null.
    /// </summary>
    public static object ToDatabase(SearchValueType type, object? value) => (type, value) switch
    {
        (_, null) => type switch
        {
            SearchValueType.Number => TypedNull.Double,
            SearchValueType.DateTime => TypedNull.Utc,
            SearchValueType.Bool => TypedNull.Boolean,
            _ => TypedNull.String,
        },
        (SearchValueType.Number, decimal number) => (double)number,
        (SearchValueType.DateTime, DateTimeOffset at) => at.UtcDateTime,
        (SearchValueType.DateTime, DateTime at) => at.Kind == DateTimeKind.Utc ? at : at.ToUniversalTime(),
        _ => value,
    };

    /// <summary>A slot column's value as the API shows it: string, decimal, UTC DateTime or bool; null when empty.</summary>
    public static object? Read(DbDataReader reader, int ordinal, SearchValueType type)
    {
        if (reader.IsDBNull(ordinal))
        {
            return null;
        }

        return type switch
        {
            SearchValueType.Number => (decimal)reader.GetDouble(ordinal),
            SearchValueType.DateTime => DateTime.SpecifyKind(reader.GetDateTime(ordinal), DateTimeKind.Utc),
            SearchValueType.Bool => reader.GetBoolean(ordinal),
            _ => reader.GetString(ordinal),
        };
    }
}
