using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;

namespace WorkflowService.Storage.Relational.Sqlite;

/// <summary>The embedded default: one SQLite file in WAL mode, written by one writer at a time.</summary>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "The SemaphoreSlim allocates nothing to dispose unless its AvailableWaitHandle is read, which this type never does; the dialect lives as long as the store.")]
public sealed class SqliteDialect : SqlDialect
{
    private readonly SemaphoreSlim _writer = new(1, 1);

    public override string Name => "sqlite";

    private const string Claim = """
        UPDATE wf_signals
           SET lease_owner = @p0, lease_token = @p1, lease_until_ms = @p3, attempts = attempts + 1
         WHERE id IN (SELECT id FROM wf_signals
                       WHERE status = 'Pending' AND due_at_ms <= @p2
                         AND (lease_until_ms IS NULL OR lease_until_ms < @p2)
                       ORDER BY due_at_ms
                       LIMIT @p4)
        RETURNING
        """ + " " + Rows.SignalColumns;

    public override string ClaimSql => Claim;

    // As EF Core's SQLite provider stores them: ids as upper-case text, times as ISO text with up to 7 fractional digits.
    public override object ToDatabase(object? value) => value switch
    {
        // A typed null too: SQLite has no parameter types to keep, and a reused command must not keep one for its next value.
        null or TypedNull => DBNull.Value,
        Guid id => id.ToString().ToUpperInvariant(),
        DateTime time => time.ToString("yyyy-MM-dd HH:mm:ss.FFFFFFF", CultureInfo.InvariantCulture),
        _ => value,
    };

    // SQLITE_BUSY (5), SQLITE_LOCKED (6), SQLITE_READONLY (8), SQLITE_IOERR (10), SQLITE_FULL (13), SQLITE_CANTOPEN (14): the
    // file cannot be written or read now (a full disk, a read-only or vanished file, another process holding it), which
    // says nothing against the request; the caller may try again once the operator has made room.
    public override bool IsUnavailable(Exception exception) =>
        AnyInChain(exception, e => e is SqliteException { SqliteErrorCode: 5 or 6 or 8 or 10 or 13 or 14 });

    // SQLite's own words ("disk I/O error") do not say where to look: the log says what the operator can check.
    public override string DescribeUnavailable(Exception exception)
    {
        SqliteException? sqlite = null;
        AnyInChain(exception, e => (sqlite = e as SqliteException) is not null);
        var meaning = sqlite?.SqliteErrorCode switch
        {
            5 or 6 => "the database file is locked by another connection or process",
            8 => "the database file is read-only (its permissions, or a read-only filesystem)",
            10 => "the database file could not be written or read: is its filesystem read-only, full or failing?",
            13 => "the disk is full",
            14 => "the database file cannot be opened (its directory missing or not writable)",
            _ => null,
        };
        var words = (sqlite ?? exception.GetBaseException()).Message;
        return meaning is null ? words : $"{meaning} ({words})";
    }

    // SQLITE_CONSTRAINT (19) with the UNIQUE (2067) or PRIMARY KEY (1555) extended code.
    public override bool IsUniqueViolation(Exception exception) =>
        exception.GetBaseException() is SqliteException { SqliteErrorCode: 19, SqliteExtendedErrorCode: 2067 or 1555 };

    public override async Task PrepareDatabaseAsync(WorkflowDbContext db, CancellationToken cancellationToken)
    {
        using var gate = await EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        var connection = (SqliteConnection)db.Database.GetDbConnection();
        var folder = Path.GetDirectoryName(Path.GetFullPath(new SqliteConnectionStringBuilder(connection.ConnectionString).DataSource));
        if (!string.IsNullOrEmpty(folder))
        {
            Directory.CreateDirectory(folder);
        }

        await db.Database.ExecuteSqlRawAsync("PRAGMA journal_mode=WAL;", cancellationToken).ConfigureAwait(false);
    }

    public override void ConfigureMigrations(FluentMigrator.Runner.IMigrationRunnerBuilder runner) => FluentMigrator.Runner.SQLiteRunnerBuilderExtensions.AddSQLite(runner);

    // As EF Core's SQLite provider stores times (see ToDatabase).
    public override string NowSql => "strftime('%Y-%m-%d %H:%M:%f', 'now')";

    public override string StringColumn(int maxLength) => "TEXT";

    public override string TextColumn => "TEXT";

    public override string Int64Column => "INTEGER";

    public override string Int32Column => "INTEGER";

    public override string BooleanColumn => "INTEGER";

    public override string DoubleColumn => "REAL";

    public override string GuidColumn => "TEXT";

    // AUTOINCREMENT: a number is never given twice, even after the newest row is deleted (a delivery's order must not repeat).
    public override string IdentityKeyColumn(string table, string column) =>
        $"{column} INTEGER NOT NULL CONSTRAINT pk_{table} PRIMARY KEY AUTOINCREMENT";

    public override string TimestampColumn => "TEXT";

    // Several processes may share the file (a node and a `migrate` command): an exclusive lock on a file beside it, which
    // the operating system releases when the process dies. An in-memory database belongs to one process and needs none.
    public override async Task<IAsyncDisposable> LockSchemaAsync(string connectionString, TimeSpan timeout, TimeProvider time,
        CancellationToken cancellationToken)
    {
        var builder = new SqliteConnectionStringBuilder(connectionString);
        if (builder.Mode == SqliteOpenMode.Memory || builder.DataSource is "" or ":memory:")
        {
            return NoLock.Instance;
        }

        var path = Path.GetFullPath(builder.DataSource) + ".migrate-lock";
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        return await WaitForSchemaLockAsync<IAsyncDisposable>(_ =>
        {
            try
            {
                return Task.FromResult<IAsyncDisposable?>(new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None));
            }
            catch (IOException e) when (e is not (DirectoryNotFoundException or FileNotFoundException or PathTooLongException))
            {
                // Another process holds the file (a sharing violation): wait for it. Anything else is the operator's to fix.
                return Task.FromResult<IAsyncDisposable?>(null);
            }
        }, timeout, time, cancellationToken).ConfigureAwait(false);
    }

    private sealed class NoLock : IAsyncDisposable
    {
        public static readonly NoLock Instance = new();

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }

    public override async Task<ISet<string>> ExistingTablesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> tables,
        CancellationToken cancellationToken)
    {
        var found = new HashSet<string>(StringComparer.Ordinal);
        foreach (var table in tables)
        {
            await using var command = connection.CreateCommand();
            command.CommandText = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $name";
            command.Parameters.Add(new SqliteParameter("$name", table));
            if (Convert.ToInt64(await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false), CultureInfo.InvariantCulture) > 0)
            {
                found.Add(table);
            }
        }

        return found;
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities",
        Justification = "The index name and definition are the store's own constants (SlotIndexes), never request input.")]
    public override async Task<bool> EnsureIndexAsync(System.Data.Common.DbConnection connection, string name, string definition, TimeSpan timeout,
        CancellationToken cancellationToken)
    {
        // One writer at a time: the build waits for the write lane, and commits wait for it.
        using var gate = await EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var command = connection.CreateCommand();
        command.CommandTimeout = (int)Math.Ceiling(timeout.TotalSeconds);
        command.CommandText = $"CREATE INDEX IF NOT EXISTS {name} {definition}";
        await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        return true;
    }

    public override async Task<ISet<string>> ValidIndexesAsync(System.Data.Common.DbConnection connection, IReadOnlyList<string> names,
        CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT name FROM sqlite_master WHERE type = 'index'";
        var found = new HashSet<string>(StringComparer.Ordinal);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
        {
            if (names.Contains(reader.GetString(0), StringComparer.Ordinal))
            {
                found.Add(reader.GetString(0));
            }
        }

        return found;
    }

    public override bool SingleWriter => true;

    public override async ValueTask<IDisposable?> EnterWriteAsync(CancellationToken cancellationToken)
    {
        await _writer.WaitAsync(cancellationToken).ConfigureAwait(false);
        return new Release(_writer);
    }

    private sealed class Release(SemaphoreSlim semaphore) : IDisposable
    {
        private int _done;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _done, 1) == 0)
            {
                semaphore.Release();
            }
        }
    }
}
