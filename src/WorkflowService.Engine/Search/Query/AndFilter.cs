namespace WorkflowService.Engine.Search.Query;

/// <summary>Every item holds. Equal to another when the items are equal in order.</summary>
public sealed record AndFilter(IReadOnlyList<SearchFilter> Items) : SearchFilter
{
    public bool Equals(AndFilter? other) => other is not null && Items.SequenceEqual(other.Items);

    public override int GetHashCode() => SearchFilterHash.Of(Items);
}
