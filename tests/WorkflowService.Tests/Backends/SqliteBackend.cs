using Microsoft.Data.Sqlite;

namespace WorkflowService.Tests.Backends;

/// <summary>The embedded default: a SQLite file of its own per test class, deleted afterwards.</summary>
public sealed class SqliteBackend : StoreBackend
{
    public override string Name => "sqlite";

    public override Task<BackendDatabase> CreateDatabaseAsync()
    {
        var path = Path.Combine(Path.GetTempPath(), "workflow-tests", $"{Guid.NewGuid():N}.db");
        var connectionString = $"Data Source={path}";
        var settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "Sqlite",
            ["Store:ConnectionString"] = connectionString,
        };
        return Task.FromResult(new BackendDatabase(settings, () =>
        {
            // This database's pool only (the service opens its connections with this string as it is). ClearAllPools
            // would clear the pools of every other test class running in parallel, and Microsoft.Data.Sqlite's clear can
            // dispose the native handle of a connection another test is just opening ("Cannot access a disposed object.
            // Object name: 'SQLitePCL.sqlite3'", in whichever SQLite test was opening one at that moment).
            using (var connection = new SqliteConnection(connectionString))
            {
                SqliteConnection.ClearPool(connection);
            }

            foreach (var file in new[] { path, path + "-wal", path + "-shm", path + ".migrate-lock" })
            {
                File.Delete(file);
            }

            return Task.CompletedTask;
        }));
    }
}
