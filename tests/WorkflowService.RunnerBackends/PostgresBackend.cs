using System.Diagnostics;
using System.Globalization;
using Microsoft.EntityFrameworkCore;
using Npgsql;
using WorkflowService.Storage.Relational.PostgreSql;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// PostgreSQL: a fresh database per run (wf_bench_&lt;timestamp&gt;) on the server the admin connection string names,
/// dropped afterwards. Counters come from pg_stat_database (this database only) and pg_stat_wal / the WAL position
/// (whole server), read over a connection to the "postgres" database so that the readings do not count themselves.
/// </summary>
internal sealed class PostgresBackend(string adminConnectionString, bool keep) : Backend
{
    private string _database = string.Empty;
    private string _connectionString = string.Empty;

    public override string Name => "postgres";

    public override IReadOnlyDictionary<string, string> ServiceEnvironment => new Dictionary<string, string>
    {
        ["Store__Provider"] = "PostgreSql",
        ["Store__ConnectionString"] = _connectionString,
    };

    public override IReadOnlyList<string> CounterNotes =>
    [
        "commits, rollbacks, rows inserted/updated/deleted: pg_stat_database for the run's database (xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted). Every statement outside an explicit transaction counts as a commit, reads included.",
        "WAL bytes: pg_stat_wal.wal_bytes (whole server); WAL bytes (LSN): the advance of pg_current_wal_lsn() (whole server, exact at the moment of reading).",
        "seq scans, rows read by seq scans, index scans: pg_stat_user_tables summed over the service's tables (wf_*). A sequential scan on the hot path shows a missing index (or a table too small for the planner to bother).",
        "PostgreSQL publishes a session's counters at most once a second, an idle session's within 10 s and an ending session's when it ends; so the counters cover a whole service process: read before it starts and once it has stopped and every session of the run's database has ended (pg_terminate_backend(pid, timeout) waits for that, on this run's database only). That window holds the measured operations, the warm-up operations, the service's start-up and shutdown and the runner's correctness-check reads; the per-operation figures divide by measured plus warm-up operations. Server-wide figures (WAL) include anything else the server did meanwhile.",
    ];

    public override async Task ProvisionAsync(string workDirectory, CancellationToken cancellationToken)
    {
        _database = $"wf_bench_{DateTime.UtcNow:yyyyMMdd_HHmmss}";
        await using (var admin = new NpgsqlConnection(Admin("postgres")))
        {
            await admin.OpenAsync(cancellationToken);
            await using var create = new NpgsqlCommand($"CREATE DATABASE {_database}", admin);
            await create.ExecuteNonQueryAsync(cancellationToken);
        }

        // The service's connection string is the admin one on the run's database, pooled as the service configures it.
        _connectionString = new NpgsqlConnectionStringBuilder(adminConnectionString) { Database = _database }.ConnectionString;
    }

    public override async Task<IReadOnlyDictionary<string, string>> ReadFactsAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin(_database));
        await connection.OpenAsync(cancellationToken);
        var facts = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["database"] = _database,
            // Whether the service's connections are encrypted (TLS costs the service and the server CPU per round trip).
            ["service connection SSL mode"] = new NpgsqlConnectionStringBuilder(_connectionString).SslMode.ToString(),
        };
        foreach (var setting in new[] { "ssl", "server_version", "synchronous_commit", "fsync", "wal_sync_method", "full_page_writes", "shared_buffers", "max_connections", "wal_level", "commit_delay" })
        {
            await using var show = new NpgsqlCommand($"SHOW {setting}", connection);
            facts[setting] = (string)(await show.ExecuteScalarAsync(cancellationToken))!;
        }

        await using var version = new NpgsqlCommand("SELECT version()", connection);
        facts["version"] = (string)(await version.ExecuteScalarAsync(cancellationToken))!;
        return facts;
    }

    public override async Task<IReadOnlyList<string>> ReadIndexesAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin(_database));
        await connection.OpenAsync(cancellationToken);
        await using var command = new NpgsqlCommand(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename LIKE 'wf\\_%' ORDER BY tablename, indexname", connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var indexes = new List<string>();
        while (await reader.ReadAsync(cancellationToken))
        {
            indexes.Add(reader.GetString(0));
        }

        return indexes;
    }

    public override async Task<IReadOnlyDictionary<string, long>> ReadCountersAsync(int? writerPid, CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin("postgres"));
        await connection.OpenAsync(cancellationToken);
        await using var command = new NpgsqlCommand("""
            SELECT d.xact_commit, d.xact_rollback, d.tup_inserted, d.tup_updated, d.tup_deleted,
                   w.wal_bytes::bigint, (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint
              FROM pg_stat_database d, pg_stat_wal w
             WHERE d.datname = $1
            """, connection);
        command.Parameters.AddWithValue(_database);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        if (!await reader.ReadAsync(cancellationToken))
        {
            throw new InvalidOperationException($"pg_stat_database has no row for {_database}");
        }

        var counters = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["commits"] = reader.GetInt64(0),
            ["rollbacks"] = reader.GetInt64(1),
            ["rows inserted"] = reader.GetInt64(2),
            ["rows updated"] = reader.GetInt64(3),
            ["rows deleted"] = reader.GetInt64(4),
            ["WAL bytes"] = reader.GetInt64(5),
            ["WAL bytes (LSN)"] = reader.GetInt64(6),
        };
        await reader.DisposeAsync();

        // Scans of the service's tables: pg_stat_user_tables lives in each database, so this one reading connects to
        // the run's database (its own transaction adds one commit to the window; it scans none of these tables).
        await using var own = new NpgsqlConnection(Admin(_database));
        await own.OpenAsync(cancellationToken);
        await using var scans = new NpgsqlCommand("""
            SELECT coalesce(sum(seq_scan), 0)::bigint, coalesce(sum(seq_tup_read), 0)::bigint, coalesce(sum(idx_scan), 0)::bigint
              FROM pg_stat_user_tables WHERE relname LIKE 'wf\_%'
            """, own);
        await using var scanned = await scans.ExecuteReaderAsync(cancellationToken);
        await scanned.ReadAsync(cancellationToken);
        counters["seq scans"] = scanned.GetInt64(0);
        counters["rows read by seq scans"] = scanned.GetInt64(1);
        counters["index scans"] = scanned.GetInt64(2);
        return counters;
    }

    /// <summary>
    /// Through a pooled connection that stays open between readings: its server process lives through the windows, so
    /// that the database CPU (summed over the live server processes) neither gains nor loses one per reading.
    /// </summary>
    public override async Task<long?> ReadWalPositionAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(
            new NpgsqlConnectionStringBuilder(Admin("postgres")) { Pooling = true, MaxPoolSize = 1, ConnectionIdleLifetime = 3600 }.ConnectionString);
        await connection.OpenAsync(cancellationToken);
        await using var command = new NpgsqlCommand("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint", connection);
        return (long)(await command.ExecuteScalarAsync(cancellationToken))!;
    }

    /// <summary>
    /// xact_commit + xact_rollback of the run's database, over a connection to the "postgres" database: the reading is
    /// counted there, never in the run's database. A session publishes its counts when it goes idle, at most once a
    /// second (within 10 s at the latest): a reading lags its database's sessions by that much.
    /// </summary>
    public override async Task<long?> ReadServerTransactionsAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin("postgres"));
        await connection.OpenAsync(cancellationToken);
        await using var command = new NpgsqlCommand("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", connection);
        command.Parameters.AddWithValue(_database);
        return await command.ExecuteScalarAsync(cancellationToken) is long count
            ? count
            : throw new InvalidOperationException($"pg_stat_database has no row for {_database}");
    }

    public override async Task<string?> DoHousekeepingNowAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin(_database));
        await connection.OpenAsync(cancellationToken);
        await using var vacuum = new NpgsqlCommand("VACUUM ANALYZE", connection) { CommandTimeout = 600 };
        await vacuum.ExecuteNonQueryAsync(cancellationToken);
        // The dirty pages the vacuum (and the work before it) left are written now rather than by a checkpoint that
        // would overlap the measurement.
        await using var checkpoint = new NpgsqlCommand("CHECKPOINT", connection) { CommandTimeout = 600 };
        await checkpoint.ExecuteNonQueryAsync(cancellationToken);
        return $"VACUUM ANALYZE and CHECKPOINT of {_database}, so that autovacuum and the checkpointer find little to do there";
    }

    public override async Task<string?> WatchQuietWindowAsync(TimeSpan window, CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin("postgres"));
        await connection.OpenAsync(cancellationToken);
        await using var workers = new NpgsqlCommand(
            "SELECT count(*)::int FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'autovacuum worker'", connection);
        workers.Parameters.AddWithValue(_database);
        var every = TimeSpan.FromMilliseconds(100);
        var clock = Stopwatch.StartNew();
        var seen = 0;
        var samples = 0;
        for (var left = window; left > TimeSpan.Zero; left = window - clock.Elapsed)
        {
            samples++;
            if ((int)(await workers.ExecuteScalarAsync(cancellationToken))! > 0)
            {
                seen++;
            }

            await Task.Delay(left < every ? left : every, cancellationToken);
        }

        return seen > 0 ? $"an autovacuum worker was in {_database} in {seen} of {samples} samples (every 100 ms)" : null;
    }

    public override string ServerTransactionsSource =>
        "pg_stat_database.xact_commit + xact_rollback of the run's database (every session: the store's pool, the LISTEN connection, NOTIFY), read over a connection to the \"postgres\" database so that the readings are not counted; every statement outside an explicit transaction is one transaction";

    /// <summary>
    /// A backend publishes its counters at the latest when it exits: wait (bounded, on the server) for every session of
    /// the run's database to be gone — the service's, or the ceiling loop's — then read.
    /// </summary>
    public override async Task<IReadOnlyDictionary<string, long>?> ReadCountersOnceWriterStoppedAsync(CancellationToken cancellationToken)
    {
        await using (var connection = new NpgsqlConnection(Admin("postgres")))
        {
            await connection.OpenAsync(cancellationToken);
            // MATERIALIZED: the sessions are chosen (this run's database only, never this session) before any is
            // ended; in a single WHERE clause PostgreSQL may call pg_terminate_backend before the other conditions.
            await using var wait = new NpgsqlCommand("""
                WITH ours AS MATERIALIZED (
                    SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid())
                SELECT count(*) FROM ours WHERE NOT pg_terminate_backend(pid, 10000)
                """, connection);
            wait.Parameters.AddWithValue(_database);
            var lingering = (long)(await wait.ExecuteScalarAsync(cancellationToken))!;
            if (lingering > 0)
            {
                Console.WriteLine($"  {lingering} sessions of {_database} did not end within 10 s; their last counters may be missing");
            }
        }

        return await ReadCountersAsync(null, cancellationToken);
    }

    public override async Task<string> SeedCompletedInstancesAsync(int count, CancellationToken cancellationToken)
    {
        var baseMs = SeedBaseMs(count);
        await using var connection = new NpgsqlConnection(Admin(_database));
        await connection.OpenAsync(cancellationToken);
        var clock = Stopwatch.StartNew();
        for (var lo = 1; lo <= count; lo += SeedBatch)
        {
            var hi = Math.Min(count, lo + SeedBatch - 1);
            // One statement per batch: the instance, its handled "go" signal and its history (CompletedRoundtripSeed), in
            // the columns and the JSON the service writes for a completed signal-roundtrip instance.
            await using var insert = new NpgsqlCommand($$$"""
                WITH s AS (
                    SELECT n, ms,
                           (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid AS iid,
                           (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-9000-' || lpad(to_hex(n), 12, '0'))::uuid AS sid
                      FROM (SELECT n, $3::bigint + n * 1000 AS ms, lpad(to_hex($3::bigint + n * 1000), 12, '0') AS h
                              FROM generate_series($1::int, $2::int) AS n) g
                ), i AS (
                    INSERT INTO wf_instances (id, definition_name, definition_version, status, variables_json, output_json,
                                              parked_signals, version, history_length, created_at, updated_at, completed_at)
                    SELECT iid, '{{{CompletedRoundtripSeed.Definition}}}', {{{CompletedRoundtripSeed.DefinitionVersion}}}, '{{{CompletedRoundtripSeed.InstanceStatusText}}}',
                           '{"go":{"value":' || n || '},"result":{"value":' || n || '}}', '{"result":{"value":' || n || '}}',
                           0, 2, {{{CompletedRoundtripSeed.History.Count}}}, to_timestamp(ms / 1000.0), to_timestamp((ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0),
                           to_timestamp((ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0)
                      FROM s
                ), sig AS (
                    INSERT INTO wf_signals (id, instance_id, name, payload_json, status, due_at_ms, attempts, lease_owner,
                                            lease_token, created_at, handled_at)
                    SELECT sid, iid, '{{{CompletedRoundtripSeed.Signal}}}', '{"value":' || n || '}', '{{{CompletedRoundtripSeed.SignalStatusText}}}',
                           ms + {{{CompletedRoundtripSeed.SignalDueAfterMs}}}, 1, '{{{CompletedRoundtripSeed.LeaseOwner}}}', n,
                           to_timestamp((ms + {{{CompletedRoundtripSeed.SignalDueAfterMs}}}) / 1000.0), to_timestamp((ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0)
                      FROM s
                )
                INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
                SELECT s.iid, e.seq, to_timestamp((s.ms + e.offset_ms) / 1000.0), e.type, e.step,
                       CASE e.seq WHEN {{{CompletedRoundtripSeed.SignalReceivedSequence}}} THEN '{"signal":"{{{CompletedRoundtripSeed.Signal}}}","signalId":"' || s.sid || '"}' ELSE e.data END
                  FROM s CROSS JOIN ({{{CompletedRoundtripSeed.HistorySql}}}) AS e
                 ORDER BY s.iid, e.seq
                """, connection) { CommandTimeout = 600 };
            insert.Parameters.AddWithValue(lo);
            insert.Parameters.AddWithValue(hi);
            insert.Parameters.AddWithValue(baseMs);
            await insert.ExecuteNonQueryAsync(cancellationToken);
            Console.WriteLine($"    seeded {hi:N0}/{count:N0} completed instances ({clock.Elapsed.TotalSeconds:F0} s)");
        }

        var inserted = clock.Elapsed;
        // What autovacuum would have done to a table that grew to this size: no autovacuum pass during the measurement.
        await using (var vacuum = new NpgsqlCommand("VACUUM ANALYZE wf_instances, wf_signals, wf_history", connection) { CommandTimeout = 600 })
        {
            await vacuum.ExecuteNonQueryAsync(cancellationToken);
        }

        var vacuumed = clock.Elapsed - inserted;
        return string.Create(CultureInfo.InvariantCulture,
            $"{count:N0} completed signal-roundtrip instances ({count:N0} instance rows, {count * (long)CompletedRoundtripSeed.History.Count:N0} history rows, {count:N0} handled signals) inserted with INSERT … SELECT generate_series in batches of {SeedBatch:N0} in {inserted.TotalSeconds:F0} s, then VACUUM ANALYZE in {vacuumed.TotalSeconds:F0} s");
    }

    /// <summary>The store's dialect on a pool of its own (no claim connection is ever opened) and one open connection.</summary>
    public override async Task<SearchStore> OpenSearchStoreAsync(CancellationToken cancellationToken)
    {
        var data = NpgsqlDataSource.Create(Admin(_database));
        var claims = new PostgresClaimDataSource(NpgsqlDataSource.Create(Admin(_database)));
        return new SearchStore(new PostgreSqlDialect(data, claims), await data.OpenConnectionAsync(cancellationToken), async () =>
        {
            await claims.DisposeAsync();
            await data.DisposeAsync();
        });
    }

    public override Task<CeilingSession> OpenCeilingAsync(int connections, bool groupCommit, CancellationToken cancellationToken)
    {
        // The service's connection settings (PostgreSqlConnectionTuning), with a pool of the ceiling's size; claims on the
        // store's own claim pool (PostgresClaimDataSource: at most four connections, asynchronous commit).
        var store = PostgreSqlConnectionTuning.Apply(new NpgsqlConnectionStringBuilder(_connectionString),
            new PostgreSqlStoreOptions { ConnectionString = _connectionString, MaxPoolSize = connections });
        var data = NpgsqlDataSource.Create(store);
        var claims = new PostgresClaimDataSource(NpgsqlDataSource.Create(PostgresClaimDataSource.ConnectionString(store)));
        return RelationalCeilingSession.OpenAsync(new PostgreSqlDialect(data, claims), o => o.UseNpgsql(data), store.ConnectionString, async ct => await data.OpenConnectionAsync(ct), async () =>
        {
            await claims.DisposeAsync();
            await data.DisposeAsync();
        }, groupCommit, cancellationToken);
    }

    public override async Task<StoreSnapshotReader> OpenStoreReaderAsync(CancellationToken cancellationToken) =>
        new SqlStoreSnapshotReader(await OpenConnectionAsync(cancellationToken));

    public override IReadOnlyDictionary<string, string> StoreTimeoutSettings(TimeSpan timeout) => RelationalTimeout(timeout);

    public override Task<(string Host, int Port)> ReadServerAddressAsync(CancellationToken cancellationToken)
    {
        var direct = new NpgsqlConnectionStringBuilder(_connectionString);
        return Task.FromResult((direct.Host!, direct.Port));
    }

    public override string ServiceConnectionStringVia(int port) =>
        new NpgsqlConnectionStringBuilder(_connectionString) { Host = "127.0.0.1", Port = port }.ConnectionString;

    /// <summary>A connection to the run's database, for reads of tables other than the store's (the Rebus peer's), never counted as the service's.</summary>
    public async Task<NpgsqlConnection> OpenConnectionAsync(CancellationToken cancellationToken)
    {
        var connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(Admin(_database)) { ApplicationName = CheckerApplicationName }.ConnectionString);
        await connection.OpenAsync(cancellationToken);
        return connection;
    }

    /// <summary>Sessions on the run's database now, the runner's own store readers (<see cref="OpenConnectionAsync"/>) not counted.</summary>
    public override async Task<int?> ReadConnectionsAsync(CancellationToken cancellationToken)
    {
        await using var connection = new NpgsqlConnection(Admin("postgres"));
        await connection.OpenAsync(cancellationToken);
        await using var command = new NpgsqlCommand(
            "SELECT count(*)::int FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2", connection);
        command.Parameters.AddWithValue(_database);
        command.Parameters.AddWithValue(CheckerApplicationName);
        return (int)(await command.ExecuteScalarAsync(cancellationToken))!;
    }

    private const string CheckerApplicationName = "workflow-fault-checker";

    /// <summary>The store's pool per node (Store:MaxPoolSize, the service's default).</summary>
    public const int ServicePoolSize = 20;

    /// <summary>The claim pool per node.</summary>
    public const int ClaimConnections = 4;

    /// <summary>Per node: its pool, its claim pool and its LISTEN connection.</summary>
    public override int? ConnectionsPerNode => ServicePoolSize + ClaimConnections + 1;

    public override async ValueTask DisposeAsync()
    {
        if (keep || _database.Length == 0)
        {
            return;
        }

        NpgsqlConnection.ClearAllPools();
        await using var admin = new NpgsqlConnection(Admin("postgres"));
        await admin.OpenAsync();
        await using var drop = new NpgsqlCommand($"DROP DATABASE IF EXISTS {_database} WITH (FORCE)", admin);
        await drop.ExecuteNonQueryAsync();
    }

    // The runner's own connections are not pooled: the wait above ends every session of the run's database.
    private string Admin(string database) => new NpgsqlConnectionStringBuilder(adminConnectionString) { Database = database, Pooling = false }.ConnectionString;
}
