using System.Diagnostics;
using System.Globalization;
using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Storage.Relational.Sqlite;
using WorkflowService.Testing.Processes;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The embedded default: a fresh SQLite file per run (WAL mode, synchronous=FULL as the service ships, or the mode
/// --sqlite-synchronous names), deleted afterwards. SQLite exposes no per-database write statistics, so the counters are the writing process's storage
/// writes from /proc/&lt;pid&gt;/io and the growth of the database and WAL files.
/// </summary>
internal sealed class SqliteBackend(bool keep, string synchronous = SqliteBackend.DefaultSynchronous) : Backend
{
    /// <summary>The service's default (Store:SqliteSynchronous).</summary>
    public const string DefaultSynchronous = "FULL";

    public string Synchronous { get; } = synchronous;

    private string _path = string.Empty;

    public override string Name => "sqlite";

    public override IReadOnlyDictionary<string, string> ServiceEnvironment => new Dictionary<string, string>
    {
        ["Store__Provider"] = "Sqlite",
        ["Store__ConnectionString"] = $"Data Source={_path}",
        ["Store__SqliteSynchronous"] = Synchronous,
    };

    public override IReadOnlyList<string> CounterNotes =>
    [
        "bytes written: write_bytes of /proc/<pid>/io of the process that writes the database (the service, from its start to just before it stops; the runner itself for the ceiling): the bytes it caused to be written to storage, i.e. SQLite's WAL appends and checkpoints. pages written = bytes written / page size (4096). The window holds the measured and the warm-up operations and the service's start-up; the per-operation figures divide by both.",
        "file growth: growth of the database file plus its -wal file (the WAL is reused after each checkpoint, so its size alone says little).",
        "SQLite has no commit or row counters of its own outside a connection (total_changes() is per connection).",
    ];

    public override Task ProvisionAsync(string workDirectory, CancellationToken cancellationToken)
    {
        _path = Path.Combine(workDirectory, $"workflow-{DateTime.UtcNow:yyyyMMdd-HHmmss}.db");
        return Task.CompletedTask;
    }

    public override async Task<IReadOnlyDictionary<string, string>> ReadFactsAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        return new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["file"] = _path,
            ["version"] = $"SQLite {await ScalarAsync(connection, "SELECT sqlite_version()", cancellationToken)} (Microsoft.Data.Sqlite, the bundle the service ships)",
            ["journal_mode"] = await ScalarAsync(connection, "PRAGMA journal_mode", cancellationToken),
            ["synchronous"] = $"{Synchronous} (Store:SqliteSynchronous; the service sets it on every connection)",
            ["page_size"] = await ScalarAsync(connection, "PRAGMA page_size", cancellationToken),
            ["wal_autocheckpoint"] = await ScalarAsync(connection, "PRAGMA wal_autocheckpoint", cancellationToken),
            ["writers"] = "one at a time: the store serialises writes in-process",
        };
    }

    public override async Task<IReadOnlyList<string>> ReadIndexesAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = new SqliteCommand(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name LIKE 'wf\\_%' ESCAPE '\\' ORDER BY tbl_name, name", connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var indexes = new List<string> { "primary keys: every wf_* table (rowid or its own B-tree)" };
        while (await reader.ReadAsync(cancellationToken))
        {
            indexes.Add(reader.GetString(0));
        }

        return indexes;
    }

    public override Task<IReadOnlyDictionary<string, long>> ReadCountersAsync(int? writerPid, CancellationToken cancellationToken)
    {
        var written = writerPid is { } pid ? ResourceProbe.Read(pid).ServiceStorageWriteBytes : 0;
        return Task.FromResult<IReadOnlyDictionary<string, long>>(new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["bytes written"] = written,
            ["pages written"] = written / 4096,
            ["file growth"] = FileSize(_path) + FileSize(_path + "-wal"),
        });
    }

    public override async Task<string> SeedCompletedInstancesAsync(int count, CancellationToken cancellationToken)
    {
        var baseMs = SeedBaseMs(count);
        await using var connection = await OpenAsync(cancellationToken);
        var clock = Stopwatch.StartNew();
        for (var lo = 1; lo <= count; lo += SeedBatch)
        {
            var hi = Math.Min(count, lo + SeedBatch - 1);
            await using var transaction = (SqliteTransaction)await connection.BeginTransactionAsync(cancellationToken);
            // The instance, its handled "go" signal and its history (CompletedRoundtripSeed), in the columns and JSON the service
            // writes (ids and timestamps as EF Core stores them on SQLite: upper-case GUID text, ISO text).
            foreach (var sql in SeedStatements)
            {
                await using var command = new SqliteCommand(Series + sql, connection, transaction) { CommandTimeout = 600 };
                command.Parameters.AddWithValue("$lo", lo);
                command.Parameters.AddWithValue("$hi", hi);
                command.Parameters.AddWithValue("$base", baseMs);
                await command.ExecuteNonQueryAsync(cancellationToken);
            }

            await transaction.CommitAsync(cancellationToken);
            Console.WriteLine($"    seeded {hi:N0}/{count:N0} completed instances ({clock.Elapsed.TotalSeconds:F0} s)");
        }

        await ScalarAsync(connection, "PRAGMA wal_checkpoint(TRUNCATE)", cancellationToken);
        return string.Create(CultureInfo.InvariantCulture,
            $"{count:N0} completed signal-roundtrip instances ({count:N0} instance rows, {count * (long)CompletedRoundtripSeed.History.Count:N0} history rows, {count:N0} handled signals) inserted with INSERT … SELECT over a recursive series in transactions of {SeedBatch:N0} in {clock.Elapsed.TotalSeconds:F0} s, then a WAL checkpoint; no ANALYZE (the service never runs it)");
    }

    /// <summary>The store's SQLite dialect (its claim statement and writer gate) on connections with the service's pragmas.</summary>
    public override Task<CeilingSession> OpenCeilingAsync(int connections, bool groupCommit, CancellationToken cancellationToken) =>
        // The group commit's writer connection gets the service's per-connection settings as the store's does (its interceptor).
        RelationalCeilingSession.OpenAsync(new SqliteDialect(), o => o.UseSqlite(ConnectionString).AddInterceptors(new SqlitePragmaInterceptor(Synchronous)),
            ConnectionString, async ct => await OpenAsync(ct), () =>
        {
            SqliteConnection.ClearAllPools();
            return ValueTask.CompletedTask;
        }, groupCommit, cancellationToken);

    public override async Task<SearchStore> OpenSearchStoreAsync(CancellationToken cancellationToken) =>
        new(new SqliteDialect(), await OpenAsync(cancellationToken), () => ValueTask.CompletedTask);

    public override async Task<StoreSnapshotReader> OpenStoreReaderAsync(CancellationToken cancellationToken) =>
        new SqlStoreSnapshotReader(await OpenAsync(cancellationToken));

    public override IReadOnlyDictionary<string, string> StoreTimeoutSettings(TimeSpan timeout) => RelationalTimeout(timeout);

    /// <summary>The embedded store is one node's file.</summary>
    public override bool SharedByNodes => false;

    public override ValueTask DisposeAsync()
    {
        SqliteConnection.ClearAllPools();
        if (!keep && _path.Length > 0)
        {
            foreach (var file in new[] { _path, _path + "-wal", _path + "-shm" })
            {
                File.Delete(file);
            }
        }

        return ValueTask.CompletedTask;
    }

    private string ConnectionString => new SqliteConnectionStringBuilder { DataSource = _path, Pooling = true }.ConnectionString;

    private async Task<SqliteConnection> OpenAsync(CancellationToken cancellationToken)
    {
        var connection = new SqliteConnection(ConnectionString);
        await connection.OpenAsync(cancellationToken);
        // The service's per-connection settings (SqlitePragmaInterceptor).
        await using var pragmas = new SqliteCommand(SqlitePragmaInterceptor.Pragmas(Synchronous), connection);
        await pragmas.ExecuteNonQueryAsync(cancellationToken);
        return connection;
    }

    private static async Task<string> ScalarAsync(SqliteConnection connection, string sql, CancellationToken cancellationToken)
    {
        await using var command = new SqliteCommand(sql, connection);
        return Convert.ToString(await command.ExecuteScalarAsync(cancellationToken), CultureInfo.InvariantCulture) ?? string.Empty;
    }

    private static long FileSize(string path) => File.Exists(path) ? new FileInfo(path).Length : 0;

    internal const string Series = """
        WITH RECURSIVE n(v) AS (SELECT $lo UNION ALL SELECT v + 1 FROM n WHERE v < $hi),
        s AS (SELECT v, $base + v * 1000 AS ms,
                     printf('%08X-%04X-7000-8000-%012X', ($base + v * 1000) >> 16, ($base + v * 1000) & 65535, v) AS iid,
                     printf('%08X-%04X-7000-9000-%012X', ($base + v * 1000) >> 16, ($base + v * 1000) & 65535, v) AS sid
                FROM n)

        """;

    internal static readonly string[] SeedStatements =
    [
        $$$"""
        INSERT INTO wf_instances (id, definition_name, definition_version, status, variables_json, output_json,
                                  parked_signals, version, history_length, created_at, updated_at, completed_at)
        SELECT iid, '{{{CompletedRoundtripSeed.Definition}}}', {{{CompletedRoundtripSeed.DefinitionVersion}}}, '{{{CompletedRoundtripSeed.InstanceStatusText}}}',
               '{"go":{"value":' || v || '},"result":{"value":' || v || '}}', '{"result":{"value":' || v || '}}',
               0, 2, {{{CompletedRoundtripSeed.History.Count}}}, strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0, 'unixepoch'),
               strftime('%Y-%m-%d %H:%M:%f', (ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0, 'unixepoch'),
               strftime('%Y-%m-%d %H:%M:%f', (ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0, 'unixepoch')
          FROM s
        """,
        $$$"""
        INSERT INTO wf_signals (id, instance_id, name, payload_json, status, due_at_ms, attempts, lease_owner, lease_token,
                                created_at, handled_at)
        SELECT sid, iid, '{{{CompletedRoundtripSeed.Signal}}}', '{"value":' || v || '}', '{{{CompletedRoundtripSeed.SignalStatusText}}}',
               ms + {{{CompletedRoundtripSeed.SignalDueAfterMs}}}, 1, '{{{CompletedRoundtripSeed.LeaseOwner}}}', v,
               strftime('%Y-%m-%d %H:%M:%f', (ms + {{{CompletedRoundtripSeed.SignalDueAfterMs}}}) / 1000.0, 'unixepoch'),
               strftime('%Y-%m-%d %H:%M:%f', (ms + {{{CompletedRoundtripSeed.CompletedAfterMs}}}) / 1000.0, 'unixepoch')
          FROM s
        """,
        $$$"""
        INSERT INTO wf_history (instance_id, sequence, at, type, step_id, data_json)
        SELECT s.iid, e.seq, strftime('%Y-%m-%d %H:%M:%f', (s.ms + e.offset_ms) / 1000.0, 'unixepoch'), e.type, e.step,
               CASE e.seq WHEN {{{CompletedRoundtripSeed.SignalReceivedSequence}}} THEN '{"signal":"{{{CompletedRoundtripSeed.Signal}}}","signalId":"' || lower(s.sid) || '"}' ELSE e.data END
          FROM s CROSS JOIN ({{{CompletedRoundtripSeed.HistorySql}}}) AS e
         ORDER BY s.v, e.seq
        """,
    ];
}
