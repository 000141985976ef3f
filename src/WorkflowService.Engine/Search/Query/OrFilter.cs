namespace WorkflowService.Engine.Search.Query;

/// <summary>At least one item holds. Equal to another when the items are equal in order.</summary>
public sealed record OrFilter(IReadOnlyList<SearchFilter> Items) : SearchFilter
{
    public bool Equals(OrFilter? other) => other is not null && Items.SequenceEqual(other.Items);

    public override int GetHashCode() => SearchFilterHash.Of(Items);
}
