using Npgsql;
using Testcontainers.PostgreSql;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A real PostgreSQL: the server named by WORKFLOW_TESTS_POSTGRES (a connection string), else one Testcontainers
/// starts where a Docker engine answers, else a throwaway one from this machine's PostgreSQL binaries
/// (<see cref="OwnedPostgresServer"/>). Each test class gets a fresh database on it, dropped afterwards.
/// </summary>
public sealed class PostgresBackend : StoreBackend
{
    public const string Variable = "WORKFLOW_TESTS_POSTGRES";
    private static readonly ServerSource Source = new(Variable, "PostgreSQL");

    public override string Name => "postgres";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var server = await ServerAsync();
        if (server is null)
        {
            Unavailable(Source.Unavailable!);
        }

        var name = $"wf_test_{Guid.NewGuid():N}";
        await using (var admin = new NpgsqlConnection(server))
        {
            await admin.OpenAsync();
            await using var create = new NpgsqlCommand($"CREATE DATABASE {name}", admin);
            await create.ExecuteNonQueryAsync();
        }

        var connection = new NpgsqlConnectionStringBuilder(server) { Database = name }.ConnectionString;
        var settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = connection,
        };
        return new BackendDatabase(settings, async () =>
        {
            NpgsqlConnection.ClearAllPools();
            await using var admin = new NpgsqlConnection(server);
            await admin.OpenAsync();
            await using var drop = new NpgsqlCommand($"DROP DATABASE IF EXISTS {name} WITH (FORCE)", admin);
            await drop.ExecuteNonQueryAsync();
        });
    }

    /// <summary>The server's admin connection string, found once per test run.</summary>
    public static Task<string?> ServerAsync() => Source.FindAsync(
        async ct =>
        {
            var container = new PostgreSqlBuilder("postgres:15").Build();
            await container.StartAsync(ct);
            return container.GetConnectionString();
        },
        OwnedPostgresServer.Unavailable,
        // Debian's binaries, as the postgres user where the tests run as root, on a data directory and port of their own.
        async ct =>
        {
            var owned = await OwnedPostgresServer.StartAsync(ct);
            return (owned.AdminConnectionString + ";Database=postgres", owned);
        });
}
