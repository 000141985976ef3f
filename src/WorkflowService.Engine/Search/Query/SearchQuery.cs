namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// The filter and orderBy languages of GET /instances (docs/search-language.md): parsing against the declared fields,
/// with every error in the client's terms and no exception for bad input, and the canonical text of a parsed tree.
/// </summary>
public static class SearchQuery
{
    private static readonly SearchQueryOptions DefaultLimits = new();

    private static readonly HashSet<string> ReservedWords = new(StringComparer.OrdinalIgnoreCase)
    {
        "and", "or", "not", "in", "startsWith", "between", "true", "false", "asc", "desc",
    };

    /// <summary>
    /// True for the language's keywords (any case), which cannot name a field in a filter; a definition should not
    /// declare an attribute with one of these names.
    /// </summary>
    public static bool IsReservedWord(string name) => ReservedWords.Contains(name);

    public static SearchParse<SearchFilter> ParseFilter(string text, ISearchFieldCatalog fields) => ParseFilter(text, fields, DefaultLimits);

    public static SearchParse<SearchFilter> ParseFilter(string text, ISearchFieldCatalog fields, SearchQueryOptions limits)
    {
        ArgumentNullException.ThrowIfNull(fields);
        if (Read(text, "filter", limits, out var reader) is { } refused)
        {
            return new(null, refused);
        }

        var error = new SearchFilterParser(reader, fields, limits).Parse(out var filter);
        return error is null ? new(filter, null) : new(null, error);
    }

    public static SearchParse<IReadOnlyList<SearchOrder>> ParseOrder(string text, ISearchFieldCatalog fields) => ParseOrder(text, fields, DefaultLimits);

    /// <summary>Parses an orderBy; blank text is an empty list (the caller's default order).</summary>
    public static SearchParse<IReadOnlyList<SearchOrder>> ParseOrder(string text, ISearchFieldCatalog fields, SearchQueryOptions limits)
    {
        ArgumentNullException.ThrowIfNull(fields);
        if (Read(text, "orderBy", limits, out var reader) is { } refused)
        {
            return new(null, refused);
        }

        var error = SearchOrderParser.Parse(reader, fields, limits, out var order);
        return error is null ? new(order, null) : new(null, error);
    }

    /// <summary>The filter as text that parses back to an equal tree; also its <c>ToString()</c>.</summary>
    public static string Canonical(SearchFilter filter)
    {
        ArgumentNullException.ThrowIfNull(filter);
        return SearchCanonical.Write(filter);
    }

    /// <summary>The orderBy as text, every field with asc or desc.</summary>
    public static string Canonical(IReadOnlyList<SearchOrder> order)
    {
        ArgumentNullException.ThrowIfNull(order);
        return SearchCanonical.Write(order);
    }

    private static SearchQueryError? Read(string text, string label, SearchQueryOptions limits, out SearchTokenReader reader)
    {
        ArgumentNullException.ThrowIfNull(text);
        ArgumentNullException.ThrowIfNull(limits);
        reader = null!;
        if (text.Length > limits.MaxLength)
        {
            return new SearchQueryError($"{label}: the text has {text.Length} characters; the limit is {limits.MaxLength}", limits.MaxLength, null);
        }

        var tokens = new List<SearchToken>();
        if (SearchLexer.Tokenize(text, label, tokens) is { } error)
        {
            return error;
        }

        reader = new SearchTokenReader(tokens, label);
        return null;
    }
}
