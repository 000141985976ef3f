using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Search;

/// <summary>The fields the search tests filter on: one or more of every type, and a built-in one.</summary>
internal static class SearchTestFields
{
    public static readonly SearchField Amount = new("amount", SearchValueType.Number, BuiltIn: false);
    public static readonly SearchField Region = new("region", SearchValueType.Keyword, BuiltIn: false);
    public static readonly SearchField Customer = new("customer", SearchValueType.Keyword, BuiltIn: false);
    public static readonly SearchField Status = new("status", SearchValueType.Keyword, BuiltIn: true);
    public static readonly SearchField SubmittedAt = new("submittedAt", SearchValueType.DateTime, BuiltIn: false);
    public static readonly SearchField Notes = new("notes", SearchValueType.Text, BuiltIn: false);
    public static readonly SearchField Urgent = new("urgent", SearchValueType.Bool, BuiltIn: false);

    public static readonly SearchFieldCatalog Catalog = new([Amount, Region, Customer, Status, SubmittedAt, Notes, Urgent]);

    public static SearchFilter Parse(string text)
    {
        var parsed = SearchQuery.ParseFilter(text, Catalog);
        Assert.True(parsed.Succeeded, parsed.Error?.Message);
        return parsed.Value;
    }

    public static SearchQueryError Refuse(string text, SearchQueryOptions? limits = null)
    {
        var parsed = SearchQuery.ParseFilter(text, Catalog, limits ?? new SearchQueryOptions());
        Assert.False(parsed.Succeeded, $"'{text}' parsed as {parsed.Value}");
        Assert.Null(parsed.Value);
        return parsed.Error;
    }
}
