namespace WorkflowService.RunnerBackends;

/// <summary>
/// A database the service can run on, as the runner needs it: a fresh database per run, the service's settings for it,
/// its version and durability settings, its own activity counters, seeding with its own driver, direct reads of the
/// store for the fault checker and the no-engine ceiling loop.
/// </summary>
internal abstract class Backend : IAsyncDisposable
{
    /// <summary>sqlite, postgres or mongodb: the scenario-name prefix and the report's file name.</summary>
    public abstract string Name { get; }

    /// <summary>Whether several service nodes can share the run's database (not an embedded store: one node's own file).</summary>
    public virtual bool SharedByNodes => true;

    /// <summary>The service's environment variables for this database (Store__Provider, Store__ConnectionString, ...).</summary>
    public abstract IReadOnlyDictionary<string, string> ServiceEnvironment { get; }

    /// <summary>What the counters are and where they come from, for the report.</summary>
    public abstract IReadOnlyList<string> CounterNotes { get; }

    /// <summary>Creates this run's empty database; the service creates its schema at start-up.</summary>
    public abstract Task ProvisionAsync(string workDirectory, CancellationToken cancellationToken);

    /// <summary>Version and durability settings.</summary>
    public abstract Task<IReadOnlyDictionary<string, string>> ReadFactsAsync(CancellationToken cancellationToken);

    /// <summary>The indexes of the service's tables (wf_*) or collections, as the database reports them: the hot path's lookups need one each.</summary>
    public abstract Task<IReadOnlyList<string>> ReadIndexesAsync(CancellationToken cancellationToken);

    /// <summary>Cumulative counters; the runner subtracts a reading before a scenario from one after it.</summary>
    /// <param name="writerPid">
    /// The process that writes to the database (the service's, or the runner's own for the ceiling); null before the
    /// service process exists (its per-process counters are then zero).
    /// </param>
    public abstract Task<IReadOnlyDictionary<string, long>> ReadCountersAsync(int? writerPid, CancellationToken cancellationToken);

    /// <summary>
    /// Counters read once the writing process has stopped, for a database that publishes a session's counters late
    /// (PostgreSQL: at the latest when the session ends); null where the reading taken while it ran is final.
    /// </summary>
    public virtual Task<IReadOnlyDictionary<string, long>?> ReadCountersOnceWriterStoppedAsync(CancellationToken cancellationToken) =>
        Task.FromResult<IReadOnlyDictionary<string, long>?>(null);

    /// <summary>
    /// Transactions the database server counted for the run's database (committed plus rolled back), read without
    /// adding to them; null where the database keeps no such count (SQLite is a library inside the service's process).
    /// </summary>
    public virtual Task<long?> ReadServerTransactionsAsync(CancellationToken cancellationToken) => Task.FromResult<long?>(null);

    /// <summary>
    /// The server's write-ahead log position in bytes, exact when read (PostgreSQL: pg_current_wal_lsn(), the whole
    /// server's); null where there is no such log to read. Two readings give the bytes written between them.
    /// </summary>
    public virtual Task<long?> ReadWalPositionAsync(CancellationToken cancellationToken) => Task.FromResult<long?>(null);

    /// <summary>How <see cref="ReadServerTransactionsAsync"/> counts, for the report; null where it counts nothing.</summary>
    public virtual string? ServerTransactionsSource => null;

    /// <summary>
    /// Does now the housekeeping the database would otherwise start by itself during a quiet measurement window
    /// (PostgreSQL: VACUUM ANALYZE of the run's database, so that autovacuum finds little to do there); says what it did.
    /// </summary>
    public virtual Task<string?> DoHousekeepingNowAsync(CancellationToken cancellationToken) => Task.FromResult<string?>(null);

    /// <summary>
    /// Waits <paramref name="window"/> while watching for the database's own background work in the run's database,
    /// whose transactions <see cref="ReadServerTransactionsAsync"/> would count (PostgreSQL: autovacuum workers, sampled
    /// every 100 ms); returns what it saw, or null for nothing.
    /// </summary>
    public virtual async Task<string?> WatchQuietWindowAsync(TimeSpan window, CancellationToken cancellationToken)
    {
        await Task.Delay(window, cancellationToken);
        return null;
    }

    /// <summary>Stores <paramref name="count"/> completed signal-roundtrip instances in the shape the service writes; says how.</summary>
    public abstract Task<string> SeedCompletedInstancesAsync(int count, CancellationToken cancellationToken);

    /// <summary>
    /// The search benchmark's direct access to the run's store (its bulk seed and the plans of its statements); only the
    /// relational stores have it.
    /// </summary>
    public virtual Task<SearchStore> OpenSearchStoreAsync(CancellationToken cancellationToken) =>
        throw new NotSupportedException($"{Name}: the search benchmark runs on sqlite and postgres");

    /// <summary>The run's store read with the backend's own driver, for the fault checker's reads that must not go through the service.</summary>
    public abstract Task<StoreSnapshotReader> OpenStoreReaderAsync(CancellationToken cancellationToken);

    /// <summary>
    /// The service's settings that bound each store call by <paramref name="timeout"/> (a fault row's outage must be
    /// answered within it): each store names it its own way.
    /// </summary>
    public abstract IReadOnlyDictionary<string, string> StoreTimeoutSettings(TimeSpan timeout);

    /// <summary>
    /// Where the service reaches the database server (the one a fault row puts a <see cref="FaultProxy"/> in front
    /// of); an embedded store has none.
    /// </summary>
    public virtual Task<(string Host, int Port)> ReadServerAddressAsync(CancellationToken cancellationToken) =>
        throw new InvalidOperationException($"{Name}: the store is inside the service's own process; there is no server to reach");

    /// <summary>The service's Store__ConnectionString for reaching the server through a proxy on loopback port <paramref name="port"/>.</summary>
    public virtual string ServiceConnectionStringVia(int port) =>
        throw new InvalidOperationException($"{Name}: the store is inside the service's own process; there is no connection to route");

    /// <summary>
    /// The most connections one service node may hold to the database (its pools and whatever else it keeps open), for the
    /// fault table's bound on connections; null where the database has none (SQLite).
    /// </summary>
    public virtual int? ConnectionsPerNode => null;

    /// <summary>The service's open connections to the run's database now; null where the database has no sessions (SQLite).</summary>
    public virtual Task<int?> ReadConnectionsAsync(CancellationToken cancellationToken) => Task.FromResult<int?>(null);

    /// <summary>A session for the ceiling loops on the run's database (<paramref name="groupCommit"/>: writes shared as the store shares them).</summary>
    public abstract Task<CeilingSession> OpenCeilingAsync(int connections, bool groupCommit, CancellationToken cancellationToken);

    /// <summary>Drops the run's database (unless kept).</summary>
    public abstract ValueTask DisposeAsync();

    /// <summary>The relational stores bound every command by one setting, in whole seconds (Store:CommandTimeoutSeconds).</summary>
    protected static IReadOnlyDictionary<string, string> RelationalTimeout(TimeSpan timeout) => new Dictionary<string, string>
    {
        ["Store__CommandTimeoutSeconds"] = ((int)timeout.TotalSeconds).ToString(System.Globalization.CultureInfo.InvariantCulture),
    };

    /// <summary>Seed batches: progress on the console and bounded transactions.</summary>
    protected const int SeedBatch = 100_000;

    /// <summary>Seeded instances were created one second apart, the last of them 30 days before now.</summary>
    protected static long SeedBaseMs(int count) => DateTimeOffset.UtcNow.AddDays(-30).ToUnixTimeMilliseconds() - count * 1000L;
}
