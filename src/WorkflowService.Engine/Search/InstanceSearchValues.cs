using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Search;

/// <summary>
/// Reads an instance's search attribute values for its view, only when its definition version declares some: reading
/// an instance of any other definition costs no query more. The values of a version this node committed come from
/// <see cref="RecentSearchValues"/>, without a read.
/// </summary>
public sealed class InstanceSearchValues(DefinitionRegistry definitions, ISearchAttributeStore store, RecentSearchValues recent)
{
    /// <summary>
    /// The stored values of <paramref name="instance"/> as the store answers (the definition's attributes that have a value,
    /// by name); null when its definition version declares none or is not found. The instance itself is left as it is, and
    /// the list returned may be shared: nobody changes it.
    /// </summary>
    public async Task<IReadOnlyList<SearchAttributeValue>?> ValuesAsync(WorkflowInstance instance, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken)
            .ConfigureAwait(false);
        if (definition is not { SearchAttributes.Count: > 0 })
        {
            return null;
        }

        if (recent.Find(instance) is { } known)
        {
            // Held as the store answers; an entry is made from the evaluation of this same definition version, so its names
            // are declared ones (checked all the same, without a copy when they are).
            return AllDeclared(known, definition.SearchAttributeNames)
                ? known
                : [.. known.Where(v => definition.SearchAttributeNames.Contains(v.Name))];
        }

        return await store.GetSearchValuesAsync(instance, definition.SearchAttributeNames, cancellationToken).ConfigureAwait(false);
    }

    private static bool AllDeclared(IReadOnlyList<SearchAttributeValue> values, IReadOnlyCollection<string> names)
    {
        foreach (var value in values)
        {
            if (!names.Contains(value.Name))
            {
                return false;
            }
        }

        return true;
    }
}
