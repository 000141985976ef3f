using System.Diagnostics.CodeAnalysis;
using Npgsql;
using Testcontainers.PostgreSql;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A real PostgreSQL: the server named by WORKFLOW_TESTS_POSTGRES (a connection string), else one Testcontainers
/// starts where a Docker engine answers. Each test class gets a fresh database on it, dropped afterwards.
/// </summary>
public sealed class PostgresBackend : StoreBackend
{
    public const string Variable = "WORKFLOW_TESTS_POSTGRES";
    private static readonly SemaphoreSlim Gate = new(1, 1);
    private static string? _server;
    private static string? _unavailable;

    public override string Name => "postgres";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var server = await ServerAsync();
        if (server is null)
        {
            Unavailable(_unavailable!);
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
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Whatever stops Testcontainers from starting PostgreSQL becomes the reason the PostgreSQL tests are reported unavailable.")]
    public static async Task<string?> ServerAsync()
    {
        await Gate.WaitAsync();
        try
        {
            if (_server is not null || _unavailable is not null)
            {
                return _server;
            }

            var configured = Environment.GetEnvironmentVariable(Variable);
            if (!string.IsNullOrWhiteSpace(configured))
            {
                return _server = configured;
            }

            if (!File.Exists("/var/run/docker.sock") && Environment.GetEnvironmentVariable("DOCKER_HOST") is null)
            {
                _unavailable = $"{Variable} is not set and no Docker engine answers for Testcontainers "
                               + "(a throwaway cluster from local binaries cannot run as root; .ci/run starts Debian's PostgreSQL and sets the variable)";
                return null;
            }

            try
            {
                var container = new PostgreSqlBuilder("postgres:15").Build();
                using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
                await container.StartAsync(timeout.Token);
                return _server = container.GetConnectionString();
            }
            catch (Exception e)
            {
                _unavailable = $"{Variable} is not set and Testcontainers could not start PostgreSQL: {e.Message}";
                return null;
            }
        }
        finally
        {
            Gate.Release();
        }
    }
}
