namespace WorkflowService.Engine.Search.Query;

/// <summary>orderBy := field ["asc"|"desc"] ("," field ["asc"|"desc"])*, each field once, text fields refused.</summary>
internal static class SearchOrderParser
{
    public static SearchQueryError? Parse(SearchTokenReader reader, ISearchFieldCatalog fields, SearchQueryOptions limits, out List<SearchOrder> order)
    {
        order = [];
        if (reader.Peek.Kind == SearchTokenKind.End)
        {
            return null;
        }

        do
        {
            var token = reader.Peek;
            if (order.Count == limits.MaxOrderFields)
            {
                return reader.Error($"the order has more than {limits.MaxOrderFields} fields", token);
            }

            if (reader.TakeField(fields, "a field name", out var field) is { } error)
            {
                return error;
            }

            if (field.Type == SearchValueType.Text)
            {
                return reader.Error($"'{field.Name}' is text, which does not sort; sort by a keyword, number, datetime or bool", token, field.Name);
            }

            if (order.Exists(o => o.Field.Name == field.Name))
            {
                return reader.Error($"'{field.Name}' appears twice", token, field.Name);
            }

            var descending = reader.TakeIf("desc");
            if (!descending)
            {
                reader.TakeIf("asc");
            }

            order.Add(new SearchOrder(field, descending));
        }
        while (reader.TakeIf(SearchTokenKind.Comma));

        return reader.Peek.Kind == SearchTokenKind.End ? null : reader.Expected("'asc', 'desc', ',' or the end of the orderBy");
    }
}
