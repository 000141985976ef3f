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

    /// <summary>
    /// The claim pool's connection string: the store's, with asynchronous commit, table and bitmap scans priced out, and at
    /// most four connections. Its statements (claims and settlements of signals and deliveries, the next delivery's due
    /// time) are written as index seeks and ordered index scans. A queue table is small in its statistics and full of dead
    /// rows between vacuums: priced as small, a table scan of it repeated for each candidate's order check, or bitmap scans
    /// that never mark an index entry dead, cost milliseconds per claim (docs/benchmarks/delivery-queue-2026-11-29.md).
    /// </summary>
    public static string ConnectionString(NpgsqlConnectionStringBuilder store)
    {
        var claims = new NpgsqlConnectionStringBuilder(store.ConnectionString)
        {
            MaxPoolSize = PoolSize(store),
            ApplicationName = string.IsNullOrEmpty(store.ApplicationName) ? "workflow-claims" : store.ApplicationName + "-claims",
        };
        const string settings = "-c synchronous_commit=off -c enable_seqscan=off -c enable_bitmapscan=off";
        claims.Options = string.IsNullOrWhiteSpace(store.Options) ? settings : store.Options + " " + settings;
        return claims.ConnectionString;
    }

    /// <summary>The claim pool's size: at most four connections.</summary>
    internal static int PoolSize(NpgsqlConnectionStringBuilder store) => Math.Min(4, store.MaxPoolSize);

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

    public override bool PositionalParameters => true;

    public override string Placeholder(int index) => index < Positional.Length ? Positional[index] : "$" + (index + 1);

    private static readonly string[] Positional = [.. Enumerable.Range(1, 512).Select(i => "$" + i)];

    private static readonly string Claim = """
        UPDATE wf_signals AS s
           SET lease_owner = $1, lease_token = $2, lease_until_ms = $4, attempts = s.attempts + 1
          FROM (SELECT id FROM wf_signals
                 WHERE status = 'Pending' AND due_at_ms <= $3
                   AND (lease_until_ms IS NULL OR lease_until_ms < $3)
                 ORDER BY due_at_ms
                 LIMIT $5
                 FOR UPDATE SKIP LOCKED) AS due
         WHERE s.id = due.id
        RETURNING
        """ + " " + Rows.SignalColumnsOf("s");

    public override string ClaimSql => Claim;

    private static readonly string ClaimWithInstances =
        "WITH claimed AS (" + Claim + ")\n"
        + $"SELECT {Rows.SignalColumnsOf("c")}, {Rows.InstanceColumnsOf("i")} FROM claimed AS c LEFT JOIN wf_instances AS i ON i.id = c.instance_id";

    public override string ClaimWithInstancesSql => ClaimWithInstances;

    /// <summary>
    /// Transient by Npgsql's word, or because the server is gone or no longer the primary (<see cref="PostgresFailover"/>):
    /// the attempt this answer allows (a retry, or the client's after its 503) may find the new primary. A write refused
    /// as read-only first empties both pools and the hosts' roles, which Npgsql would otherwise keep.
    /// </summary>
    public override bool IsTransient(Exception exception)
    {
        if (PostgresFailover.LandedOnAStandby(exception))
        {
            PostgresFailover.Forget(dataSource);
            PostgresFailover.Forget(claims.Source);
        }

        return PostgresFailover.MeansServerLost(exception) || AnyInChain(exception, e => e is NpgsqlException { IsTransient: true });
    }

    public override bool IsUniqueViolation(Exception exception) =>
        exception.GetBaseException() is PostgresException { SqlState: PostgresErrorCodes.UniqueViolation };

    public override void ConfigureMigrations(FluentMigrator.Runner.IMigrationRunnerBuilder runner) => FluentMigrator.Runner.PostgresRunnerBuilderExtensions.AddPostgres(runner);

    public override string NowSql => "now()";

    public override string StringColumn(int maxLength) => $"character varying({maxLength})";

    public override string TextColumn => "text";

    public override string Int64Column => "bigint";

    public override string Int32Column => "integer";

    public override string BooleanColumn => "boolean";

    public override string DoubleColumn => "double precision";

    public override string GuidColumn => "uuid";

    public override string SkipLocked(string alias) => $" FOR UPDATE OF {alias} SKIP LOCKED";

    public override bool WritesInCommonTableExpressions => true;

    public override (string Open, string Close) OneOf(string column) => ($"{column} = ANY(ARRAY(", "))");

    public override string IdentityKeyColumn(string table, string column) =>
        $"{column} bigint GENERATED BY DEFAULT AS IDENTITY CONSTRAINT pk_{table} PRIMARY KEY";

    public override string TimestampColumn => "timestamp with time zone";

    public override async Task<string?> CurrentSchemaAsync(System.Data.Common.DbConnection connection, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT current_schema()";
        return await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) as string;
    }

    // A session-level advisory lock on a connection of its own, outside the pool, held while FluentMigrator migrates on
    // another: the lock lives exactly as long as that session, so closing it (or the node dying) always releases it, and no
    // pooled connection ever carries it back into the pool.
    public override async Task<IAsyncDisposable> LockSchemaAsync(string connectionString, TimeSpan timeout, TimeProvider time,
        CancellationToken cancellationToken)
    {
        var unpooled = new NpgsqlConnectionStringBuilder(connectionString) { Pooling = false }.ConnectionString;
        return await WaitForSchemaLockAsync<IAsyncDisposable>(async ct =>
        {
            var connection = new NpgsqlConnection(unpooled);
            try
            {
                await connection.OpenAsync(ct).ConfigureAwait(false);
                await using var command = new NpgsqlCommand("SELECT pg_try_advisory_lock(@key)", connection);
                command.Parameters.AddWithValue("key", SchemaLockKey);
                if (await command.ExecuteScalarAsync(ct).ConfigureAwait(false) is true)
                {
                    return new SchemaLock(connection);
                }
            }
            catch
            {
                await connection.DisposeAsync().ConfigureAwait(false);
                throw;
            }

            await connection.DisposeAsync().ConfigureAwait(false);
            return null;
        }, timeout, time, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The held lock: closing its session (unpooled) releases it on the server.</summary>
    private sealed class SchemaLock(NpgsqlConnection connection) : IAsyncDisposable
    {
        public ValueTask DisposeAsync() => connection.DisposeAsync();
    }

    public override Task<ISet<string>> ExistingTablesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> tables,
        CancellationToken cancellationToken) =>
        NamesAsync(connection, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY(@names)",
            tables, cancellationToken);

    /// <summary>Which of <paramref name="names"/> the query (one column of names, taking them as @names) returns.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities",
        Justification = "The two callers pass constant catalog queries; the names are a parameter.")]
    private static async Task<ISet<string>> NamesAsync(System.Data.Common.DbConnection connection, string sql, IReadOnlyList<string> names,
        CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.Parameters.Add(new NpgsqlParameter("names", names.ToArray()));
        var found = new HashSet<string>(StringComparer.Ordinal);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            found.Add(reader.GetString(0));
        }

        return found;
    }

    /// <summary>The first key of the advisory lock index builds take.</summary>
    private const int IndexLockClass = 0x5746_4958;

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities",
        Justification = "The index name and definition are the store's own constants (SlotIndexes), never request input.")]
    public override async Task<bool> EnsureIndexAsync(System.Data.Common.DbConnection connection, string name, string definition, TimeSpan timeout,
        CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandTimeout = (int)Math.Ceiling(timeout.TotalSeconds);
        if (await IsValidIndexAsync(command, name, cancellationToken).ConfigureAwait(false))
        {
            return true;
        }

        // One index build at a time across nodes (every slot index is on wf_instances, and two concurrent builds on one
        // table wait for each other): a session-level lock, tried and never waited for (a session waiting for it would
        // hold a snapshot that CREATE INDEX CONCURRENTLY in turn waits for). Taken inside the try, and released with
        // every session lock of this pooled connection (pooled connections are not reset on close): if even that fails,
        // the connection is broken and its session, with the lock, ends.
        try
        {
            command.CommandText = "SELECT pg_try_advisory_lock(@class, 0)";
            command.Parameters.Add(new NpgsqlParameter("class", IndexLockClass));
            if (await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is not true)
            {
                return false;
            }

            command.Parameters.Clear();
            if (await IsValidIndexAsync(command, name, cancellationToken).ConfigureAwait(false))
            {
                return true;
            }

            // What is there is invalid (a concurrent build that failed; it serves no query), or nothing is.
            command.Parameters.Clear();
            command.CommandText = $"DROP INDEX CONCURRENTLY IF EXISTS {name}";
            await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            // CONCURRENTLY takes no lock that stops the instances' writes (and runs outside a transaction).
            command.CommandText = $"CREATE INDEX CONCURRENTLY {name} {definition}";
            await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            return await IsValidIndexAsync(command, name, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            command.Parameters.Clear();
            command.CommandText = "SELECT pg_advisory_unlock_all()";
            await command.ExecuteNonQueryAsync(CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static async Task<bool> IsValidIndexAsync(System.Data.Common.DbCommand command, string name, CancellationToken cancellationToken)
    {
        command.Parameters.Clear();
        command.CommandText = "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = @name AND i.indisvalid";
        command.Parameters.Add(new NpgsqlParameter("name", name));
        var valid = await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is long count && count > 0;
        command.Parameters.Clear();
        return valid;
    }

    public override Task<ISet<string>> ValidIndexesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> names,
        CancellationToken cancellationToken) =>
        NamesAsync(connection, "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "WHERE n.nspname = current_schema() AND c.relname = ANY(@names) AND i.indisvalid", names, cancellationToken);

    public override async Task<long?> ReadClockMsAsync(WorkflowDbContext db, CancellationToken cancellationToken) =>
        await db.Database.SqlQueryRaw<long>("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS \"Value\"")
            .SingleAsync(cancellationToken).ConfigureAwait(false);
}
