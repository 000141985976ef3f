namespace WorkflowService.Engine.Search.Query;

/// <summary>A parsed filter: a tree of and, or, not and predicates over typed fields.</summary>
public abstract record SearchFilter
{
    /// <summary>The canonical text (<see cref="SearchQuery.Canonical(SearchFilter)"/>), for logs and cursors.</summary>
    public sealed override string ToString() => SearchQuery.Canonical(this);
}
