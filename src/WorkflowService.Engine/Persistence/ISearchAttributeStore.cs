using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Persistence;

/// <summary>
/// A tenant's search attributes: the names declared and the slot each is stored in, each instance's values, and counts
/// by value. The values themselves are written with the instance, by its commits (<see cref="WorkflowInstance.SearchAttributes"/>).
/// </summary>
public interface ISearchAttributeStore
{
    /// <summary>
    /// Declares <paramref name="attributes"/> in <paramref name="tenant"/> (those already declared with the same type are
    /// left as they are); nothing is declared and the problem comes back when one cannot be.
    /// </summary>
    Task<SearchDeclarationProblem?> DeclareSearchAttributesAsync(string tenant, IReadOnlyList<(string Name, SearchValueType Type)> attributes,
        CancellationToken cancellationToken);

    /// <summary>The tenant's declared attributes.</summary>
    Task<IReadOnlyList<DeclaredSearchAttribute>> GetSearchAttributesAsync(string tenant, CancellationToken cancellationToken);

    /// <summary>
    /// The instance's stored values of the attributes named (its definition's), in name order, those with no value left
    /// out. Names known to the store are not read again (a name never changes its slot).
    /// </summary>
    Task<IReadOnlyList<SearchAttributeValue>> GetSearchValuesAsync(WorkflowInstance instance, IReadOnlyCollection<string> names,
        CancellationToken cancellationToken);

    /// <summary>
    /// How many of the instances <paramref name="query"/> matches (its paging ignored) have each value of
    /// <paramref name="by"/>, most first, at most <paramref name="top"/> values; counting stops after
    /// <paramref name="maxCounted"/> instances.
    /// </summary>
    Task<SearchValueCounts> CountBySearchValueAsync(InstanceQuery query, SearchField by, int top, int maxCounted, CancellationToken cancellationToken);
}

/// <summary>Counts by value: each value with its count, most first, and whether every matching instance was counted.</summary>
public sealed record SearchValueCounts(IReadOnlyList<(object Value, long Count)> Values, bool Complete);
