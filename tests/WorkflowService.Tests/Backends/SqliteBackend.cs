using Microsoft.Data.Sqlite;

namespace WorkflowService.Tests.Backends;

/// <summary>The embedded default: a SQLite file of its own per test class, deleted afterwards.</summary>
public sealed class SqliteBackend : StoreBackend
{
    public override string Name => "sqlite";

    public override Task<BackendDatabase> CreateDatabaseAsync()
    {
        var path = Path.Combine(Path.GetTempPath(), "workflow-tests", $"{Guid.NewGuid():N}.db");
        var settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "Sqlite",
            ["Store:ConnectionString"] = $"Data Source={path}",
        };
        return Task.FromResult(new BackendDatabase(settings, () =>
        {
            SqliteConnection.ClearAllPools();
            foreach (var file in new[] { path, path + "-wal", path + "-shm" })
            {
                File.Delete(file);
            }

            return Task.CompletedTask;
        }));
    }
}
