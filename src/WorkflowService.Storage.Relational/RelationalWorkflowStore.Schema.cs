using WorkflowService.Storage.Relational.Migrations;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Schema migrations and the start-up checks (<see cref="IStoreSchema"/>).</summary>
public sealed partial class RelationalWorkflowStore : IStoreSchema
{
    public async Task InitializeAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await dialect.PrepareDatabaseAsync(db, cancellationToken).ConfigureAwait(false);
        var status = migrator.ApplyAtStartup
            ? await migrator.MigrateAsync(cancellationToken).ConfigureAwait(false)
            : await migrator.GetStatusAsync(cancellationToken).ConfigureAwait(false);
        migrator.CheckNodeSupported(status);
        if (migrator.ApplyAtStartup)
        {
            await EnsureSlotIndexesInUseAsync(cancellationToken).ConfigureAwait(false);
        }
        // The database's clock against this node's: every node's store clock then agrees with the database's.
        await _clock.MeasureAsync(ct => dialect.ReadClockMsAsync(db, ct), cancellationToken).ConfigureAwait(false);
    }

    public async Task<SchemaStatus> GetSchemaStatusAsync(CancellationToken cancellationToken)
    {
        await PrepareAsync(cancellationToken).ConfigureAwait(false);
        return await WithMissingIndexesAsync(await migrator.GetStatusAsync(cancellationToken).ConfigureAwait(false), cancellationToken)
            .ConfigureAwait(false);
    }

    /// <summary>The status with the search slot indexes still to build, once the schema has search attributes (16 and later).</summary>
    private async Task<SchemaStatus> WithMissingIndexesAsync(SchemaStatus status, CancellationToken cancellationToken) =>
        status.Newest >= 16
            ? status with { MissingIndexes = await MissingSlotIndexesAsync(cancellationToken).ConfigureAwait(false) }
            : status;

    public async Task<SchemaStatus> MigrateAsync(CancellationToken cancellationToken)
    {
        await PrepareAsync(cancellationToken).ConfigureAwait(false);
        var status = await migrator.MigrateAsync(cancellationToken).ConfigureAwait(false);
        await EnsureSlotIndexesInUseAsync(cancellationToken).ConfigureAwait(false);
        return await WithMissingIndexesAsync(status, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>What the database needs before anything reads its schema (SQLite: its folder), on a fresh deployment's command too.</summary>
    private async Task PrepareAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await dialect.PrepareDatabaseAsync(db, cancellationToken).ConfigureAwait(false);
    }
}
