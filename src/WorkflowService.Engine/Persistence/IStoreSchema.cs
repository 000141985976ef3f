namespace WorkflowService.Engine.Persistence;

/// <summary>The store's administration: what has to happen before any other call.</summary>
public interface IStoreSchema
{
    /// <summary>Creates the schema (collections, tables, indexes) before any other call; safe on many nodes at once.</summary>
    Task InitializeAsync(CancellationToken cancellationToken);
}
