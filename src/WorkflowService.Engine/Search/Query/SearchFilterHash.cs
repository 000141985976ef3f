namespace WorkflowService.Engine.Search.Query;

/// <summary>The hash of a list compared item by item, for the filters whose equality is by the items in order.</summary>
internal static class SearchFilterHash
{
    public static int Of<T>(IReadOnlyList<T> items)
    {
        var hash = new HashCode();
        foreach (var item in items)
        {
            hash.Add(item);
        }

        return hash.ToHashCode();
    }
}
