using System.Data.Common;
using FluentMigrator;
using FluentMigrator.Runner;
using FluentMigrator.Runner.Initialization;
using FluentMigrator.Runner.VersionTableInfo;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>How the relational schema is migrated: the connection FluentMigrator uses and the bounds of its wait.</summary>
/// <param name="ConnectionString">The store's connection string, for FluentMigrator's own connection.</param>
/// <param name="ApplyAtStartup">Whether a node applies pending steps itself (else an operator runs <c>migrate</c> first).</param>
/// <param name="Timeout">How long a node waits for another's migration, and how long one statement may run.</param>
public sealed record SchemaMigrationSettings(string ConnectionString, bool ApplyAtStartup, TimeSpan Timeout);

/// <summary>
/// Applies the numbered schema steps (<see cref="SchemaStepMigration"/>) with FluentMigrator, one at a time under the
/// dialect's schema lock, and reads the range of releases a database supports from its wf_schema row.
/// </summary>
public sealed partial class SchemaMigrator(
    IDbContextFactory<WorkflowDbContext> contexts,
    SqlDialect dialect,
    SchemaMigrationSettings settings,
    TimeProvider time,
    ILoggerFactory loggers)
{
    private readonly ILogger _logger = loggers.CreateLogger<SchemaMigrator>();

    /// <summary>The schema this build is written for: its newest step.</summary>
    public static int Current => Steps[^1].Version;

    /// <summary>Every step this build knows, oldest first.</summary>
    public static IReadOnlyList<SchemaStep> Steps { get; } = typeof(SchemaStepMigration).Assembly.GetTypes()
        .Where(t => t.IsSubclassOf(typeof(SchemaStepMigration)) && !t.IsAbstract)
        .Select(t => (Type: t, Attribute: (MigrationAttribute)Attribute.GetCustomAttribute(t, typeof(MigrationAttribute))!))
        .OrderBy(s => s.Attribute.Version)
        .Select(s => new SchemaStep((int)s.Attribute.Version, s.Attribute.Description ?? s.Type.Name, OldestCompatibleOf(s.Type), null))
        .ToList();

    private static int OldestCompatibleOf(Type step) =>
        ((SchemaStepMigration)System.Runtime.CompilerServices.RuntimeHelpers.GetUninitializedObject(step)).OldestCompatible;

    public bool ApplyAtStartup => settings.ApplyAtStartup;

    /// <summary>The longest a schema change may take (Store:MigrationTimeout): a migration, or a search slot's index build.</summary>
    public TimeSpan Timeout => settings.Timeout;

    /// <summary>Applies the pending steps under the schema lock and returns the status after them.</summary>
    public async Task<SchemaStatus> MigrateAsync(CancellationToken cancellationToken)
    {
        await using (await dialect.LockSchemaAsync(settings.ConnectionString, settings.Timeout, time, cancellationToken).ConfigureAwait(false))
        {
            var (before, tables, schema) = await ReadStatusAsync(cancellationToken).ConfigureAwait(false);
            CheckUpgradable(before, tables.Contains("wf_instances") && !tables.Contains("wf_schema"));
            if (before.Pending.Count > 0)
            {
                LogMigrating(_logger, dialect.Name, before.Newest, Current, string.Join(", ", before.Pending.Select(p => p.Version)));
                // FluentMigrator's runner is synchronous; it runs once per start or per operator command.
                var target = new MigrationTarget(dialect, tables.Contains("wf_instances"), schema);
                await Task.Run(() => RunPendingSteps(target), cancellationToken).ConfigureAwait(false);
            }

            var after = await GetStatusAsync(cancellationToken).ConfigureAwait(false);
            if (before.Pending.Count > 0)
            {
                LogMigrated(_logger, dialect.Name, after.OldestSupported, after.Newest);
            }

            return after;
        }
    }

    /// <summary>Refuses what no step can upgrade: tables from a build before schema versioning, or before the baseline.</summary>
    private void CheckUpgradable(SchemaStatus status, bool legacyTables)
    {
        if (legacyTables)
        {
            throw new StoreSchemaException(
                $"The {dialect.Name} database holds workflow tables from a build older than schema versioning (no wf_schema table); "
                + $"no step upgrades them. Export what you need and recreate the database.");
        }

        if (status.Newest is { } newest && newest < Steps[0].Version)
        {
            throw new StoreSchemaException(
                $"The {dialect.Name} database has workflow schema {newest}, older than the baseline ({Steps[0].Version}) that upgrades start "
                + "from. Export what you need and recreate the database.");
        }
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1031:Do not catch general exception types",
        Justification = "Only the clean-up after a failed step: its failure is logged, and the step's own error is rethrown.")]
    private void RunPendingSteps(MigrationTarget target)
    {
        using var services = new ServiceCollection()
            .AddSingleton(loggers)
            .AddSingleton(target)
            .AddFluentMigratorCore()
            .ConfigureRunner(runner =>
            {
                dialect.ConfigureMigrations(runner);
                runner.WithGlobalConnectionString(settings.ConnectionString)
                    .WithGlobalCommandTimeout(settings.Timeout)
                    .ScanIn(typeof(SchemaStepMigration).Assembly).For.Migrations();
            })
            .AddScoped<IVersionTableMetaData>(_ => new MigrationHistoryTable(target.Schema))
            // Each step in a transaction of its own: a failed step leaves the ones before it applied and itself not at all.
            .Configure<RunnerOptions>(o => o.TransactionPerSession = false)
            .BuildServiceProvider(validateScopes: false);
        var scope = services.CreateScope();
        try
        {
            scope.ServiceProvider.GetRequiredService<IMigrationRunner>().MigrateUp(Current);
        }
        catch (Exception)
        {
            try
            {
                scope.Dispose();
            }
            catch (Exception cleanup)
            {
                // After a failed step the runner's clean-up can fail too (FluentMigrator's processor rolls back a transaction
                // the lost connection already ended, and throws ObjectDisposedException): the step's own error is the one to
                // report, so it is rethrown rather than hidden behind this one.
                LogCleanupFailed(_logger, dialect.Name, cleanup);
            }

            throw;
        }

        scope.Dispose();
    }

    /// <summary>The database's schema as wf_schema and wf_migrations record it, and what this build would apply. Changes nothing.</summary>
    public async Task<SchemaStatus> GetStatusAsync(CancellationToken cancellationToken) =>
        (await ReadStatusAsync(cancellationToken).ConfigureAwait(false)).Status;

    /// <summary>The status, which of the service's tables exist, and the schema unqualified names resolve to.</summary>
    private async Task<(SchemaStatus Status, ISet<string> Tables, string? Schema)> ReadStatusAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var connection = db.Database.GetDbConnection();
            int? oldest = null, newest = null;
            var tables = await dialect.ExistingTablesAsync(connection, ["wf_schema", MigrationHistoryTable.Name, "wf_instances"], cancellationToken)
                .ConfigureAwait(false);
            if (tables.Contains("wf_schema"))
            {
                await using var command = connection.CreateCommand();
                command.CommandText = "SELECT * FROM wf_schema WHERE id = 1";
                await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
                if (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
                {
                    oldest = Convert.ToInt32(reader["version"], System.Globalization.CultureInfo.InvariantCulture);
                    // Before schema 6 there is no newest_version column: the one version is both ends of the range.
                    newest = HasColumn(reader, "newest_version")
                        ? Convert.ToInt32(reader["newest_version"], System.Globalization.CultureInfo.InvariantCulture)
                        : oldest;
                }
            }

            var applied = new Dictionary<int, DateTime>();
            if (tables.Contains(MigrationHistoryTable.Name))
            {
                await using var command = connection.CreateCommand();
                command.CommandText = $"SELECT version, applied_at FROM {MigrationHistoryTable.Name}";
                await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
                while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
                {
                    applied[Convert.ToInt32(reader.GetValue(0), System.Globalization.CultureInfo.InvariantCulture)] =
                        DateTime.SpecifyKind(Convert.ToDateTime(reader.GetValue(1), System.Globalization.CultureInfo.InvariantCulture), DateTimeKind.Utc);
                }
            }

            var status = new SchemaStatus(
                dialect.Name,
                Current,
                oldest,
                newest,
                Steps.Where(s => applied.ContainsKey(s.Version)).Select(s => s with { AppliedAt = applied[s.Version] }).ToList(),
                Steps.Where(s => !applied.ContainsKey(s.Version)).ToList());
            return (status, tables, await dialect.CurrentSchemaAsync(connection, cancellationToken).ConfigureAwait(false));
        }
        finally
        {
            await db.Database.CloseConnectionAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Refuses a node outside the range the database supports, or one that would need steps it may not apply itself, with
    /// the reason and what to do.
    /// </summary>
    public void CheckNodeSupported(SchemaStatus status)
    {
        ArgumentNullException.ThrowIfNull(status);
        if (status.RefusalReason(settings.ApplyAtStartup, "schema row (wf_schema)") is { } refused)
        {
            throw new StoreSchemaException(refused);
        }

        if (status is { Newest: { } newest, OldestSupported: { } oldest } && Current < newest)
        {
            LogNewerDatabase(_logger, dialect.Name, newest, Current, oldest);
        }
    }

    private static bool HasColumn(DbDataReader reader, string name)
    {
        for (var i = 0; i < reader.FieldCount; i++)
        {
            if (string.Equals(reader.GetName(i), name, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A search slot's index could not be built; filters on its attribute read the table until a later build succeeds.</summary>
    public void IndexBuildFailed(string index, Exception exception) => LogIndexBuildFailed(_logger, index, dialect.Name, exception);

    [LoggerMessage(Level = LogLevel.Warning,
        Message = "Building index {Index} on the {Store} database failed; it is built again at the next declaration, start-up or migrate (GET /admin/schema lists it as missing)")]
    private static partial void LogIndexBuildFailed(ILogger logger, string index, string store, Exception exception);

    /// <summary>Another build on this node held the builds' lane past the bound; the indexes are left for a later build.</summary>
    public void IndexBuildsWaited(IEnumerable<string> indexes) =>
        LogIndexBuildsWaited(_logger, string.Join(", ", indexes), dialect.Name, Timeout);

    [LoggerMessage(Level = LogLevel.Warning,
        Message = "Indexes {Indexes} on the {Store} database were not built: another build on this node held on past Store:MigrationTimeout ({Timeout}); they are built at the next declaration, start-up or migrate (GET /admin/schema lists them as missing)")]
    private static partial void LogIndexBuildsWaited(ILogger logger, string indexes, string store, TimeSpan timeout);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Migrating the {Store} workflow schema from {From} to {To} (steps {Steps})")]
    private static partial void LogMigrating(ILogger logger, string store, int? from, int to, string steps);

    [LoggerMessage(Level = LogLevel.Debug, Message = "Cleaning up after a failed {Store} schema step failed as well; the step's own error follows")]
    private static partial void LogCleanupFailed(ILogger logger, string store, Exception exception);

    [LoggerMessage(Level = LogLevel.Information, Message = "The {Store} workflow schema is at {Newest}; it supports releases of schema {Oldest} and newer")]
    private static partial void LogMigrated(ILogger logger, string store, int? oldest, int? newest);

    [LoggerMessage(Level = LogLevel.Information,
        Message = "The {Store} database has workflow schema {Newest}, newer than this node's {Current}; it still supports releases from schema {Oldest}, so this node runs (a rolling upgrade)")]
    private static partial void LogNewerDatabase(ILogger logger, string store, int newest, int current, int oldest);
}
