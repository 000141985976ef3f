namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// Recursive descent over the filter grammar (docs/search-language.md). Nesting is counted and refused past the limit
/// before the parser recurses, so no text can exhaust the stack. Nested and-in-and and or-in-or are flattened, so
/// equivalent texts give equal trees and one canonical form.
/// </summary>
internal sealed class SearchFilterParser(SearchTokenReader reader, ISearchFieldCatalog fields, SearchQueryOptions limits)
{
    private int _predicates;

    public SearchQueryError? Parse(out SearchFilter filter)
    {
        if (ParseOr(0, out filter) is { } error)
        {
            return error;
        }

        return reader.Peek.Kind == SearchTokenKind.End ? null : reader.Expected("'and', 'or' or the end of the filter");
    }

    private SearchQueryError? ParseOr(int depth, out SearchFilter filter) => ParseChain("or", depth, out filter);

    private SearchQueryError? ParseChain(string keyword, int depth, out SearchFilter filter)
    {
        var items = new List<SearchFilter>();
        do
        {
            var error = keyword == "or" ? ParseChain("and", depth, out var item) : ParseUnary(depth, out item);
            if (error is not null)
            {
                filter = null!;
                return error;
            }

            Flatten(keyword, item, items);
        }
        while (reader.TakeIf(keyword));

        filter = items.Count == 1 ? items[0] : keyword == "or" ? new OrFilter(items) : new AndFilter(items);
        return null;
    }

    private static void Flatten(string keyword, SearchFilter item, List<SearchFilter> items)
    {
        switch (item)
        {
            case AndFilter all when keyword == "and":
                items.AddRange(all.Items);
                break;
            case OrFilter any when keyword == "or":
                items.AddRange(any.Items);
                break;
            default:
                items.Add(item);
                break;
        }
    }

    private SearchQueryError? ParseUnary(int depth, out SearchFilter filter)
    {
        filter = null!;
        var token = reader.Peek;
        var nests = token.Is("not") || token.Kind == SearchTokenKind.OpenParen;
        if (nests && depth >= limits.MaxDepth)
        {
            return reader.Error($"the filter nests deeper than {limits.MaxDepth} levels of parentheses and not", token);
        }

        if (reader.TakeIf("not"))
        {
            var error = ParseUnary(depth + 1, out var inner);
            filter = error is null ? new NotFilter(inner) : null!;
            return error;
        }

        if (reader.TakeIf(SearchTokenKind.OpenParen))
        {
            return ParseOr(depth + 1, out filter)
                ?? (reader.TakeIf(SearchTokenKind.CloseParen) ? null : reader.Expected("'and', 'or' or ')'"));
        }

        return ParsePredicate(out filter);
    }

    private SearchQueryError? ParsePredicate(out SearchFilter filter)
    {
        filter = null!;
        var fieldToken = reader.Peek;
        if (reader.TakeField(fields, "a field name, 'not' or '('", out var field) is { } unknown)
        {
            return unknown;
        }

        if (++_predicates > limits.MaxPredicates)
        {
            return reader.Error($"the filter has more than {limits.MaxPredicates} predicates", fieldToken);
        }

        var opToken = reader.Peek;
        var op = opToken.Kind == SearchTokenKind.Operator ? opToken.Text
            : opToken.Is("in") ? "in" : opToken.Is("startsWith") ? "startsWith" : opToken.Is("between") ? "between" : null;
        if (op is null)
        {
            return reader.Expected($"an operator (=, !=, <, <=, >, >=, between, in or startsWith) after '{field.Name}'");
        }

        if (!SearchTypeRules.Takes(field.Type, op))
        {
            return reader.Error(
                $"'{field.Name}' is {SearchTypeRules.Describe(field.Type)}; it takes {SearchTypeRules.Operators(field.Type)}, not {op}",
                opToken, field.Name);
        }

        reader.Take();
        return op switch
        {
            "in" => ParseIn(field, out filter),
            "startsWith" => ParseStartsWith(field, out filter),
            "between" => ParseBetween(field, out filter),
            _ => ParseComparison(field, Operator(op), out filter),
        };
    }

    private SearchQueryError? ParseComparison(SearchField field, ComparisonOperator op, out SearchFilter filter)
    {
        var valueToken = reader.Peek;
        var error = SearchTypeRules.ReadValue(reader, field, out var value);
        if (error is null && field.Type == SearchValueType.Text && SearchText.Words((string)value).Count == 0)
        {
            error = reader.Error($"'{field.Name}' is text; {valueToken.Text} has no word to match (letters or digits)", valueToken, field.Name);
        }

        filter = error is null ? new ComparisonFilter(field, op, value) : null!;
        return error;
    }

    private SearchQueryError? ParseBetween(SearchField field, out SearchFilter filter)
    {
        filter = null!;
        if (SearchTypeRules.ReadValue(reader, field, out var low) is { } error)
        {
            return error;
        }

        if (!reader.TakeIf("and"))
        {
            return reader.Expected($"'and' between the bounds of '{field.Name}'");
        }

        if (SearchTypeRules.ReadValue(reader, field, out var high) is { } highError)
        {
            return highError;
        }

        filter = new AndFilter([
            new ComparisonFilter(field, ComparisonOperator.GreaterOrEqual, low),
            new ComparisonFilter(field, ComparisonOperator.LessOrEqual, high),
        ]);
        return null;
    }

    private SearchQueryError? ParseIn(SearchField field, out SearchFilter filter)
    {
        filter = null!;
        if (!reader.TakeIf(SearchTokenKind.OpenParen))
        {
            return reader.Expected($"'(' after '{field.Name} in'");
        }

        var values = new List<object>();
        do
        {
            if (values.Count == limits.MaxInValues)
            {
                return reader.Error($"the in list of '{field.Name}' has more than {limits.MaxInValues} values", reader.Peek, field.Name);
            }

            if (SearchTypeRules.ReadValue(reader, field, out var value) is { } error)
            {
                return error;
            }

            values.Add(value);
        }
        while (reader.TakeIf(SearchTokenKind.Comma));

        if (!reader.TakeIf(SearchTokenKind.CloseParen))
        {
            return reader.Expected("',' or ')'");
        }

        filter = new InFilter(field, values);
        return null;
    }

    private SearchQueryError? ParseStartsWith(SearchField field, out SearchFilter filter)
    {
        filter = null!;
        var token = reader.Peek;
        if (token.Kind != SearchTokenKind.String)
        {
            return token.Kind == SearchTokenKind.Number || token.Is("true") || token.Is("false")
                ? reader.Error($"startsWith takes a string in double quotes; {token.Text} is not one", token, field.Name)
                : reader.Expected("a string in double quotes");
        }

        reader.Take();
        var prefix = token.Unescaped!;
        if (prefix.Length == 0)
        {
            return reader.Error($"startsWith on '{field.Name}' needs at least one character", token, field.Name);
        }

        if (field.Type == SearchValueType.Text && !SearchText.IsOneWord(prefix))
        {
            return reader.Error($"'{field.Name}' is text; startsWith takes one word of letters and digits, not {token.Text}", token, field.Name);
        }

        filter = new PrefixFilter(field, prefix);
        return null;
    }

    private static ComparisonOperator Operator(string op) => op switch
    {
        "=" => ComparisonOperator.Equal,
        "!=" => ComparisonOperator.NotEqual,
        "<" => ComparisonOperator.Less,
        "<=" => ComparisonOperator.LessOrEqual,
        ">" => ComparisonOperator.Greater,
        _ => ComparisonOperator.GreaterOrEqual,
    };
}
