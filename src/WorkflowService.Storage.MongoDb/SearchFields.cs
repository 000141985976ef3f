using System.Text.RegularExpressions;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Search attributes in the instance document: values in search.&lt;slot&gt; (absent when empty, so that each slot's
/// partial index holds only the instances that have it), and a filter, order and keyset position over them.
/// </summary>
internal sealed class SearchFields(IReadOnlyDictionary<string, DeclaredSearchAttribute> declared)
{
    private static FilterDefinitionBuilder<InstanceDocument> Filter => Builders<InstanceDocument>.Filter;

    /// <summary>
    /// The search fields after a commit: <paramref name="stored"/> (the document's as read, null for a new instance) with
    /// each of <paramref name="values"/> set in its slot, or removed when empty. A commit may evaluate only some
    /// attributes (those whose value may have changed): the others keep their stored values.
    /// </summary>
    public static BsonDocument Document(BsonDocument? stored, IReadOnlyList<SearchAttributeValue> values,
        IReadOnlyDictionary<string, DeclaredSearchAttribute> declared)
    {
        var document = stored is null ? new BsonDocument() : (BsonDocument)stored.DeepClone();
        foreach (var value in values)
        {
            if (!declared.TryGetValue(value.Name, out var attribute) || attribute.Type != value.Type)
            {
                continue;
            }

            if (value.Value is null)
            {
                document.Remove(attribute.Slot);
            }
            else
            {
                document[attribute.Slot] = ToBson(value.Type, value.Value);
            }
        }

        return document;
    }

    /// <summary>The values of the tenant's attributes a document's search fields hold.</summary>
    public static List<SearchAttributeValue> Values(BsonDocument? search, IEnumerable<DeclaredSearchAttribute> declared) =>
        search is null
            ? []
            : declared.Where(a => search.Contains(a.Slot)).OrderBy(a => a.Name, StringComparer.Ordinal)
                .Select(a => new SearchAttributeValue(a.Name, a.Type, FromBson(a.Type, search[a.Slot]))).ToList();

    public static BsonValue ToBson(SearchValueType type, object value) => (type, value) switch
    {
        (SearchValueType.Number, decimal number) => new BsonDouble((double)number),
        (SearchValueType.DateTime, DateTimeOffset at) => new BsonDateTime(at.UtcDateTime),
        (SearchValueType.DateTime, DateTime at) => new BsonDateTime(at),
        (_, bool flag) => (BsonBoolean)flag,
        _ => new BsonString((string)value),
    };

    public static object? FromBson(SearchValueType type, BsonValue value) => type switch
    {
        _ when value.IsBsonNull => null,
        SearchValueType.Number => (decimal)value.ToDouble(),
        SearchValueType.DateTime => value.ToUniversalTime(),
        SearchValueType.Bool => value.AsBoolean,
        _ => value.AsString,
    };

    /// <summary>A field's element: the instance's own (status, definitionName, …) or its attribute's slot under search.</summary>
    public string Element(SearchField field) => field.Name switch
    {
        _ when !field.BuiltIn => declared.TryGetValue(field.Name, out var attribute) && attribute.Type == field.Type
            ? $"search.{attribute.Slot}"
            : throw new ArgumentException($"'{field.Name}' is not a declared search attribute of the tenant", nameof(field)),
        "definition" => "definitionName",
        _ => field.Name,
    };

    /// <summary>The filter; "not" is the complement ($nor), so an instance without the attribute matches "not region = …".</summary>
    public FilterDefinition<InstanceDocument> Where(SearchFilter filter) => filter switch
    {
        AndFilter and => Filter.And(and.Items.Select(Where)),
        OrFilter or => Filter.Or(or.Items.Select(Where)),
        NotFilter not => Filter.Not(Where(not.Inner)),
        ComparisonFilter { Field.Type: SearchValueType.Text, Operator: ComparisonOperator.Equal } words => Filter.And(
            ((string)words.Value).Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries)
            .Select(w => Filter.Regex(Element(words.Field), new BsonRegularExpression(Regex.Escape(w), "i")))
            .Prepend(Filter.Exists(Element(words.Field)))),
        ComparisonFilter c => Compare(Element(c.Field), c.Operator, Value(c.Field, c.Value)),
        InFilter @in => Filter.In(Element(@in.Field), @in.Values.Select(v => Value(@in.Field, v))),
        PrefixFilter prefix => Filter.Regex(Element(prefix.Field), new BsonRegularExpression("^" + Regex.Escape(prefix.Prefix))),
        _ => throw new ArgumentException($"unknown filter {filter.GetType().Name}", nameof(filter)),
    };

    /// <summary>The documents after <paramref name="after"/> in the order (sort value then id, in the order's direction).</summary>
    public FilterDefinition<InstanceDocument> After(SearchOrder order, InstancePosition after)
    {
        var element = Element(order.Field);
        BsonValue value = order.Field.BuiltIn ? new BsonDateTime(after.CreatedAt) : ToBson(order.Field.Type, after.SortValue!);
        var id = new BsonBinaryData(after.Id, GuidRepresentation.Standard);
        return order.Descending
            ? Filter.Lt(element, value) | (Filter.Eq(element, value) & Filter.Lt("_id", id))
            : Filter.Gt(element, value) | (Filter.Eq(element, value) & Filter.Gt("_id", id));
    }

    public SortDefinition<InstanceDocument> Sort(SearchOrder order) => order.Descending
        ? Builders<InstanceDocument>.Sort.Descending(Element(order.Field)).Descending("_id")
        : Builders<InstanceDocument>.Sort.Ascending(Element(order.Field)).Ascending("_id");

    private static FilterDefinition<InstanceDocument> Compare(string element, ComparisonOperator op, BsonValue value) => op switch
    {
        ComparisonOperator.Equal => Filter.Eq(element, value),
        // As on the relational stores: != matches the instances that have another value, not those without one.
        ComparisonOperator.NotEqual => Filter.Exists(element) & Filter.Ne(element, value),
        ComparisonOperator.Less => Filter.Lt(element, value),
        ComparisonOperator.LessOrEqual => Filter.Lte(element, value),
        ComparisonOperator.Greater => Filter.Gt(element, value),
        _ => Filter.Gte(element, value),
    };

    private static BsonValue Value(SearchField field, object value) => field switch
    {
        { BuiltIn: true, Name: "status" } when value is string text && Enum.TryParse<InstanceStatus>(text, ignoreCase: true, out var status)
            => new BsonString(status.ToString()),
        _ => ToBson(field.Type, value),
    };
}
