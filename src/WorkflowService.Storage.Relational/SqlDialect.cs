namespace WorkflowService.Storage.Relational;

/// <summary>What differs between SQL databases: the claim statement, error classification, schema bootstrap, write concurrency.</summary>
public abstract class SqlDialect
{
    public abstract string Name { get; }

    /// <summary>
    /// The placeholder of a statement's parameter <paramref name="index"/> (from 0): named (<c>@p0</c>) by default; a
    /// dialect with <see cref="PositionalParameters"/> numbers them its own way.
    /// </summary>
    public virtual string Placeholder(int index) => index < NamedPlaceholders.Length ? NamedPlaceholders[index] : "@p" + index;

    /// <summary>
    /// Whether parameters are bound by position, without names: PostgreSQL's own <c>$1</c>, which Npgsql sends as it is,
    /// where named placeholders make it parse and rewrite every statement's text on every execution.
    /// </summary>
    public virtual bool PositionalParameters => false;

    private static readonly string[] NamedPlaceholders = [.. Enumerable.Range(0, 512).Select(i => "@p" + i)];

    /// <summary>
    /// Leases due signals and returns them. Parameters, in the dialect's placeholders: 0 owner, 1 lease token, 2 now
    /// (Unix ms), 3 lease end (Unix ms), 4 batch size. Must return <see cref="Rows.SignalColumns"/>, in order.
    /// </summary>
    public abstract string ClaimSql { get; }

    /// <summary>
    /// <see cref="ClaimSql"/> returning, after the signal's columns, its instance's <see cref="Rows.InstanceColumns"/>
    /// (null columns when the instance is missing), in one statement; null where the claim and the read go separately.
    /// </summary>
    public virtual string? ClaimWithInstancesSql => null;

    /// <summary>
    /// Where claims take their connections, when not from <see cref="DataSource"/>: PostgreSQL claims commit without
    /// waiting for the WAL flush (a lease lost in a crash is claimed again; the wait point's durable commit flushes it).
    /// </summary>
    public virtual System.Data.Common.DbDataSource? ClaimDataSource => DataSource;

    /// <summary>True when the exception is a unique-constraint violation (by the provider's error code, never its text).</summary>
    public abstract bool IsUniqueViolation(Exception exception);

    /// <summary>True when the failure is worth one more try on a new connection (a dropped connection, a failover).</summary>
    public virtual bool IsTransient(Exception exception) => false;

    /// <summary>
    /// Whether <paramref name="exception"/> says the database is out of reach (down, paused, its connections all taken, a
    /// timeout) rather than that the request was wrong: the caller may try again later. By default, a transient failure.
    /// </summary>
    public virtual bool IsUnavailable(Exception exception) => IsTransient(exception);

    /// <summary>What an unavailable store's failure means, for the operator reading the log: by default the driver's words.</summary>
    public virtual string DescribeUnavailable(Exception exception) => exception.GetBaseException().Message;

    /// <summary>
    /// Whether <paramref name="exception"/> or any exception inside it matches: EF Core wraps the driver's exception, and
    /// the driver's own may carry the socket or timeout error inside it, so neither the outermost nor the innermost is
    /// reliably the driver's.
    /// </summary>
    protected static bool AnyInChain(Exception exception, Func<Exception, bool> match)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (match(e))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whatever the database needs before its schema is migrated (SQLite: its folder, WAL mode); nothing by default.</summary>
    public virtual Task PrepareDatabaseAsync(WorkflowDbContext db, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Picks FluentMigrator's processor for this database.</summary>
    public abstract void ConfigureMigrations(FluentMigrator.Runner.IMigrationRunnerBuilder runner);

    /// <summary>
    /// Takes the lock that lets one node (or one <c>migrate</c> command) at a time change the schema, waiting at most
    /// <paramref name="timeout"/> for another holder; disposing the result releases it.
    /// </summary>
    public abstract Task<IAsyncDisposable> LockSchemaAsync(string connectionString, TimeSpan timeout, TimeProvider time, CancellationToken cancellationToken);

    /// <summary>Which of <paramref name="tables"/> exist.</summary>
    public abstract Task<ISet<string>> ExistingTablesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> tables,
        CancellationToken cancellationToken);

    /// <summary>
    /// Builds index <paramref name="name"/> (<paramref name="definition"/>: "ON table (columns) WHERE ...") on a table in
    /// use, unless a valid index of that name exists; waits at most <paramref name="timeout"/>. Where the server can, the
    /// build stops no writes (PostgreSQL: CONCURRENTLY); a build that failed before is replaced. False when another
    /// session is building it (it is that session's to finish), or the build left no valid index.
    /// </summary>
    public abstract Task<bool> EnsureIndexAsync(System.Data.Common.DbConnection connection, string name, string definition, TimeSpan timeout,
        CancellationToken cancellationToken);

    /// <summary>Which of the indexes <paramref name="names"/> exist and can serve queries.</summary>
    public abstract Task<ISet<string>> ValidIndexesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> names,
        CancellationToken cancellationToken);

    /// <summary>The SQL for the current time, stored the way the EF Core model stores times.</summary>
    public abstract string NowSql { get; }

    /// <summary>The column type the EF Core model gives a string of at most <paramref name="maxLength"/> characters.</summary>
    public abstract string StringColumn(int maxLength);

    /// <summary>The column type the EF Core model gives a string of any length.</summary>
    public abstract string TextColumn { get; }

    /// <summary>The column type the EF Core model gives a long.</summary>
    public abstract string Int64Column { get; }

    /// <summary>The column type the EF Core model gives an int.</summary>
    public abstract string Int32Column { get; }

    /// <summary>The column type the EF Core model gives a double.</summary>
    public abstract string DoubleColumn { get; }

    /// <summary>The column type the EF Core model gives a bool.</summary>
    public abstract string BooleanColumn { get; }

    /// <summary>The column type the EF Core model gives a Guid.</summary>
    public abstract string GuidColumn { get; }

    /// <summary>A long primary key the database numbers on insert, as the EF Core model declares it: the column's whole definition.</summary>
    public abstract string IdentityKeyColumn(string table, string column);

    /// <summary>The row lock a claim's inner SELECT takes on <paramref name="alias"/>, skipping rows another claim holds; empty where one writer runs at a time.</summary>
    public virtual string SkipLocked(string alias) => "";

    /// <summary>Whether a statement may write in a common table expression and read its RETURNING rows (PostgreSQL).</summary>
    public virtual bool WritesInCommonTableExpressions => false;

    /// <summary>
    /// What goes before and after a subquery for "<paramref name="column"/> is one of its rows". Where arrays exist
    /// (PostgreSQL) the subquery runs once into an array that the column's index is sought with, whatever a generic plan
    /// made on an empty table would have joined.
    /// </summary>
    public virtual (string Open, string Close) OneOf(string column) => ($"{column} IN (", ")");

    /// <summary>The column type the EF Core model gives a (UTC) DateTime.</summary>
    public abstract string TimestampColumn { get; }

    /// <summary>
    /// The schema (namespace) unqualified names resolve to on <paramref name="connection"/>, for the migration runner's own
    /// table; null where the database has none (SQLite).
    /// </summary>
    public virtual Task<string?> CurrentSchemaAsync(System.Data.Common.DbConnection connection, CancellationToken cancellationToken) =>
        Task.FromResult<string?>(null);

    /// <summary>The schema lock's wait: tries <paramref name="tryTake"/> every quarter second until it succeeds or the timeout passes.</summary>
    protected async Task<T> WaitForSchemaLockAsync<T>(Func<CancellationToken, Task<T?>> tryTake, TimeSpan timeout, TimeProvider time,
        CancellationToken cancellationToken) where T : class
    {
        var started = time.GetTimestamp();
        while (true)
        {
            if (await tryTake(cancellationToken).ConfigureAwait(false) is { } taken)
            {
                return taken;
            }

            if (time.GetElapsedTime(started) >= timeout)
            {
                throw new Engine.Persistence.StoreSchemaException(
                    $"Another node has held the {Name} schema lock (a migration) for longer than Store:MigrationTimeout ({timeout}); "
                    + "wait for it to end, or raise the timeout.");
            }

            await Task.Delay(TimeSpan.FromMilliseconds(250), time, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The database's clock in Unix ms, or null where the store runs on this process's clock (SQLite).</summary>
    public virtual Task<long?> ReadClockMsAsync(WorkflowDbContext db, CancellationToken cancellationToken) => Task.FromResult<long?>(null);

    /// <summary>
    /// A value as the hand-written SQL binds it, stored the way the EF Core model stores it (SQLite keeps ids and times
    /// as text); null becomes DBNull.
    /// </summary>
    public virtual object ToDatabase(object? value) => value ?? DBNull.Value;

    /// <summary>
    /// The provider's own connection source, where the hot-path reads should take connections straight from it (a
    /// server database: no context per read); null to read through pooled contexts (SQLite, in process).
    /// </summary>
    public virtual System.Data.Common.DbDataSource? DataSource => null;

    /// <summary>True where the database takes one writer at a time (its writes then share one connection).</summary>
    public virtual bool SingleWriter => false;

    /// <summary>Serialises writers where the database allows only one (SQLite); null where it needs no help.</summary>
    public virtual ValueTask<IDisposable?> EnterWriteAsync(CancellationToken cancellationToken) => ValueTask.FromResult<IDisposable?>(null);
}
