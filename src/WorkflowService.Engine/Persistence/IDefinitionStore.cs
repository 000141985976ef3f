namespace WorkflowService.Engine.Persistence;

/// <summary>Published workflow definitions, each name with its numbered versions.</summary>
public interface IDefinitionStore
{
    /// <summary>Stores the definition <paramref name="build"/> makes for the next version number of <paramref name="name"/>.</summary>
    Task<DefinitionRecord> PublishDefinitionAsync(string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken);
    /// <summary>The version asked for, or the latest when <paramref name="version"/> is null.</summary>
    Task<DefinitionRecord?> GetDefinitionAsync(string name, int? version, CancellationToken cancellationToken);
    Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(CancellationToken cancellationToken);
    Task<IReadOnlyList<DefinitionRecord>> ListDefinitionVersionsAsync(string name, CancellationToken cancellationToken);
}
