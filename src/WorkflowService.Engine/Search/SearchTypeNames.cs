using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>The names a definition gives the search attribute types.</summary>
public static class SearchTypeNames
{
    private static readonly Dictionary<string, SearchValueType> Types = new(StringComparer.Ordinal)
    {
        ["keyword"] = SearchValueType.Keyword,
        ["text"] = SearchValueType.Text,
        ["number"] = SearchValueType.Number,
        ["datetime"] = SearchValueType.DateTime,
        ["bool"] = SearchValueType.Bool,
    };

    /// <summary>The names, for messages: "keyword, text, number, datetime, bool".</summary>
    public static string All => string.Join(", ", Types.Keys);

    public static bool TryParse(string? name, out SearchValueType type) => Types.TryGetValue(name ?? "", out type);

    public static string Of(SearchValueType type) => Types.First(t => t.Value == type).Key;
}
