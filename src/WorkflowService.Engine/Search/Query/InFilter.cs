namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// The field equals one of the values (each typed as in <see cref="ComparisonFilter"/>). Equal to another when the field
/// and the values are equal in order.
/// </summary>
public sealed record InFilter(SearchField Field, IReadOnlyList<object> Values) : SearchFilter
{
    public bool Equals(InFilter? other) => other is not null && Field == other.Field && Values.SequenceEqual(other.Values);

    public override int GetHashCode() => HashCode.Combine(Field, SearchFilterHash.Of(Values));
}
