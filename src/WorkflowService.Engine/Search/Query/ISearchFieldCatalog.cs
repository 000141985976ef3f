using System.Diagnostics.CodeAnalysis;

namespace WorkflowService.Engine.Search.Query;

/// <summary>The fields a query may name; names are case-sensitive.</summary>
public interface ISearchFieldCatalog
{
    bool TryGet(string name, [MaybeNullWhen(false)] out SearchField field);
}
