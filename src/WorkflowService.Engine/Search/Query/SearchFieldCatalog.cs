namespace WorkflowService.Engine.Search.Query;

/// <summary>A fixed set of fields by name (ordinal, case-sensitive).</summary>
public sealed class SearchFieldCatalog(IEnumerable<SearchField> fields) : ISearchFieldCatalog
{
    private readonly Dictionary<string, SearchField> _fields = fields.ToDictionary(f => f.Name, StringComparer.Ordinal);

    public bool TryGet(string name, out SearchField field) => _fields.TryGetValue(name, out field!);
}
