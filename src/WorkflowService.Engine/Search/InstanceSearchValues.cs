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
    /// <summary>The instance with its stored values in <see cref="WorkflowInstance.SearchAttributes"/> (a copy); null stays null.</summary>
    public async Task<WorkflowInstance?> ReadAsync(WorkflowInstance? instance, CancellationToken cancellationToken)
    {
        if (instance is null)
        {
            return null;
        }

        var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken)
            .ConfigureAwait(false);
        if (definition is not { SearchAttributes.Count: > 0 })
        {
            return instance;
        }

        var copy = instance.Clone();
        copy.SearchAttributes = recent.Find(instance) is { } known
            // As the store answers: the definition's attributes that have a value, by name.
            ? known.Where(v => v.Value is not null && definition.SearchAttributeNames.Contains(v.Name))
                .OrderBy(v => v.Name, StringComparer.Ordinal).ToList()
            : await store.GetSearchValuesAsync(instance, definition.SearchAttributeNames, cancellationToken).ConfigureAwait(false);
        return copy;
    }
}
