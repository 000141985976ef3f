using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Infrastructure;
using Microsoft.EntityFrameworkCore.Storage;
using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// The connections PostgreSQL claims take: the store's connection string with <c>synchronous_commit = off</c> for their
/// sessions, in a small pool of their own (claims come from one dispatcher loop per node).
/// </summary>
public sealed class PostgresClaimDataSource(NpgsqlDataSource source) : IAsyncDisposable
{
    public NpgsqlDataSource Source => source;

    /// <summary>The claim pool's connection string: the store's, with asynchronous commit and at most four connections.</summary>
    public static string ConnectionString(NpgsqlConnectionStringBuilder store)
    {
        var claims = new NpgsqlConnectionStringBuilder(store.ConnectionString)
        {
            MaxPoolSize = Math.Min(4, store.MaxPoolSize),
            ApplicationName = string.IsNullOrEmpty(store.ApplicationName) ? "workflow-claims" : store.ApplicationName + "-claims",
        };
        claims.Options = string.IsNullOrWhiteSpace(store.Options) ? "-c synchronous_commit=off" : store.Options + " -c synchronous_commit=off";
        return claims.ConnectionString;
    }

    public ValueTask DisposeAsync() => source.DisposeAsync();
}

/// <summary>
/// PostgreSQL: claims with FOR UPDATE SKIP LOCKED (with their instances, in one statement, committed without waiting for
/// the WAL flush), schema bootstrap under an advisory lock.
/// </summary>
public sealed class PostgreSqlDialect(NpgsqlDataSource dataSource, PostgresClaimDataSource claims) : SqlDialect
{
    public override System.Data.Common.DbDataSource DataSource => dataSource;

    /// <summary>
    /// A claim only leases: losing one in a crash is harmless (the signal is claimed again once the lease runs out, and the
    /// wait point's commit checks the lease token). So claims do not wait for the WAL flush; the wait point's durable
    /// commit, later in the same WAL, flushes the claim with it.
    /// </summary>
    public override System.Data.Common.DbDataSource ClaimDataSource => claims.Source;

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

    private static readonly string ClaimWithInstances =
        "WITH claimed AS (" + Claim + ")\n"
        + $"SELECT {Rows.SignalColumnsOf("c")}, {Rows.InstanceColumnsOf("i")} FROM claimed AS c LEFT JOIN wf_instances AS i ON i.id = c.instance_id";

    public override string ClaimWithInstancesSql => ClaimWithInstances;

    public override bool IsTransient(Exception exception) => AnyInChain(exception, e => e is NpgsqlException { IsTransient: true });

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
