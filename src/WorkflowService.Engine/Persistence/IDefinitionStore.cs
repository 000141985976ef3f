namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Published workflow definitions, each name with its numbered versions, per tenant: the same name in two tenants is two
/// independent definitions ("" is the default tenant).
/// </summary>
public interface IDefinitionStore
{
    /// <summary>Stores the definition <paramref name="build"/> makes for the next version number of <paramref name="name"/> in <paramref name="tenant"/>.</summary>
    Task<DefinitionRecord> PublishDefinitionAsync(string tenant, string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken);
    /// <summary>The version asked for, or the latest when <paramref name="version"/> is null.</summary>
    Task<DefinitionRecord?> GetDefinitionAsync(string tenant, string name, int? version, CancellationToken cancellationToken);
    Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(string tenant, CancellationToken cancellationToken);
    /// <summary>
    /// Up to <paramref name="limit"/> versions of <paramref name="name"/> after <paramref name="afterVersion"/> (from the
    /// first when null), oldest first; a total of 0 when no definition has that name.
    /// </summary>
    Task<KeysetPage<DefinitionRecord>> ListDefinitionVersionsAsync(string tenant, string name, int? afterVersion, int limit, CancellationToken cancellationToken);
}
