using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Infrastructure;
using Microsoft.EntityFrameworkCore.Storage;
using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>PostgreSQL: claims with FOR UPDATE SKIP LOCKED, schema bootstrap under an advisory lock.</summary>
public sealed class PostgreSqlDialect(NpgsqlDataSource dataSource) : SqlDialect
{
    public override System.Data.Common.DbDataSource DataSource => dataSource;

    // Any constant works; it only has to be the same on every node.
    private const long SchemaLockKey = 0x5746_5343_4845_4D41;

    public override string Name => "postgresql";

    private static readonly string Claim = """
        UPDATE wf_signals AS s
           SET lease_owner = @p0, lease_token = @p1, lease_until_ms = @p3, attempts = s.attempts + 1
          FROM (SELECT id FROM wf_signals
                 WHERE status = 'Pending' AND due_at_ms <= @p2
                   AND (lease_until_ms IS NULL OR lease_until_ms < @p2)
                 ORDER BY due_at_ms
                 LIMIT @p4
                 FOR UPDATE SKIP LOCKED) AS due
         WHERE s.id = due.id
        RETURNING
        """ + " " + Rows.SignalColumnsOf("s");

    public override string ClaimSql => Claim;

    public override bool IsTransient(Exception exception) => exception.GetBaseException() is NpgsqlException { IsTransient: true };

    public override bool IsUniqueViolation(Exception exception) =>
        exception.GetBaseException() is PostgresException { SqlState: PostgresErrorCodes.UniqueViolation };

    public override async Task EnsureSchemaAsync(WorkflowDbContext db, CancellationToken cancellationToken)
    {
        // Several nodes may start against an empty database at once: one creates the schema, the others wait for it.
        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await db.Database.ExecuteSqlRawAsync("SELECT pg_advisory_lock({0})", [SchemaLockKey], cancellationToken).ConfigureAwait(false);
            try
            {
                var exists = await db.Database.SqlQueryRaw<bool>(
                        "SELECT to_regclass('wf_instances') IS NOT NULL AS \"Value\"").SingleAsync(cancellationToken).ConfigureAwait(false);
                if (!exists)
                {
                    await db.Database.CreateExecutionStrategy().ExecuteAsync(db, static async (context, ct) =>
                    {
                        await using var transaction = await context.Database.BeginTransactionAsync(ct).ConfigureAwait(false);
                        await context.GetService<IRelationalDatabaseCreator>().CreateTablesAsync(ct).ConfigureAwait(false);
                        await transaction.CommitAsync(ct).ConfigureAwait(false);
                    }, cancellationToken).ConfigureAwait(false);
                }
            }
            finally
            {
                await db.Database.ExecuteSqlRawAsync("SELECT pg_advisory_unlock({0})", [SchemaLockKey], CancellationToken.None).ConfigureAwait(false);
            }
        }
        finally
        {
            await db.Database.CloseConnectionAsync().ConfigureAwait(false);
        }
    }

    public override async Task<long?> ReadClockMsAsync(WorkflowDbContext db, CancellationToken cancellationToken) =>
        await db.Database.SqlQueryRaw<long>("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS \"Value\"")
            .SingleAsync(cancellationToken).ConfigureAwait(false);
}
