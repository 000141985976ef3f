using System.Data.Common;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Schema creation and the start-up checks (<see cref="IStoreSchema"/>).</summary>
public sealed partial class RelationalWorkflowStore : IStoreSchema
{
    public async Task InitializeAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await dialect.EnsureSchemaAsync(db, cancellationToken).ConfigureAwait(false);
        await CheckSchemaVersionAsync(cancellationToken).ConfigureAwait(false);
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

    /// <summary>
    /// Records the schema version in a new database, and refuses to start on a database written by a build with another
    /// schema (there are no migrations yet: such a database must be recreated or migrated by hand).
    /// </summary>
    private async Task CheckSchemaVersionAsync(CancellationToken cancellationToken)
    {
        for (var attempt = 0; attempt < 3; attempt++)
        {
            await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            SchemaVersion? stored;
            try
            {
                stored = await db.Schema.AsNoTracking().Where(v => v.Id == 1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is DbException or InvalidOperationException)
            {
                throw new InvalidOperationException(
                    $"The {dialect.Name} database holds workflow tables from a build older than schema versioning "
                    + $"(no wf_schema table); this build needs schema {SchemaVersion.Current}. Recreate the database.", e);
            }

            if (stored is not null)
            {
                if (stored.Version != SchemaVersion.Current)
                {
                    throw new InvalidOperationException(
                        $"The {dialect.Name} database has workflow schema {stored.Version}; this build needs schema {SchemaVersion.Current}.");
                }

                return;
            }

            db.Schema.Add(new SchemaVersion { Version = SchemaVersion.Current, AppliedAt = time.GetUtcNow().UtcDateTime });
            try
            {
                await db.SaveChangesAsync(cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (DbUpdateException e) when (dialect.IsUniqueViolation(e))
            {
                // Another node recorded it first: read it back.
            }
        }
    }
}
