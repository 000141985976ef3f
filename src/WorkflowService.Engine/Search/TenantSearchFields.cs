using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>What a tenant's filters may name: the instance's own fields and the tenant's declared search attributes.</summary>
public static class TenantSearchFields
{
    /// <summary>The instance's own fields a filter may name (the list's own parameters): a search attribute may not take these names.</summary>
    public static readonly IReadOnlyList<SearchField> BuiltIns =
    [
        new("status", SearchValueType.Keyword, true),
        new("definition", SearchValueType.Keyword, true),
        new("businessKey", SearchValueType.Keyword, true),
        new("createdAt", SearchValueType.DateTime, true),
        new("updatedAt", SearchValueType.DateTime, true),
    ];

    /// <summary>The list's own order, newest first.</summary>
    public static readonly SearchOrder NewestFirst = new(BuiltIns[3], Descending: true);

    public static bool IsBuiltIn(string name) => BuiltIns.Any(f => f.Name == name);

    /// <summary>The fields of a tenant that declared <paramref name="declared"/>.</summary>
    public static SearchFieldCatalog Of(IEnumerable<DeclaredSearchAttribute> declared) =>
        new(BuiltIns.Concat(declared.Select(d => new SearchField(d.Name, d.Type, false))));
}
