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
        // The database's clock against this node's, the way NTP does it: of a few readings, the one with the shortest round
        // trip (the first pays for compiling the query), its midpoint taken as the moment the database read its clock. So
        // every node's store clock agrees with the database's to within half a round trip and a millisecond.
        long? offset = null;
        var shortest = long.MaxValue;
        for (var reading = 0; reading < ClockReadings; reading++)
        {
            var before = time.GetTimestamp();
            var database = await dialect.ReadClockMsAsync(db, cancellationToken).ConfigureAwait(false);
            var after = time.GetTimestamp();
            if (database is not { } dbNow)
            {
                break;
            }

            if (after - before < shortest)
            {
                shortest = after - before;
                var midpoint = time.GetUtcNow() - time.GetElapsedTime(before, after) / 2 - time.GetElapsedTime(after);
                offset = dbNow - midpoint.ToUnixTimeMilliseconds();
            }
        }

        if (offset is { } ms)
        {
            Interlocked.Exchange(ref _clockOffsetMs, ms);
        }
    }

    private const int ClockReadings = 5;

    public async Task<SchemaStatus> GetSchemaStatusAsync(CancellationToken cancellationToken)
    {
        await PrepareAsync(cancellationToken).ConfigureAwait(false);
        return await migrator.GetStatusAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<SchemaStatus> MigrateAsync(CancellationToken cancellationToken)
    {
        await PrepareAsync(cancellationToken).ConfigureAwait(false);
        return await migrator.MigrateAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>What the database needs before anything reads its schema (SQLite: its folder), on a fresh deployment's command too.</summary>
    private async Task PrepareAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await dialect.PrepareDatabaseAsync(db, cancellationToken).ConfigureAwait(false);
    }
}
