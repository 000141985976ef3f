using System.Diagnostics.CodeAnalysis;
using Npgsql;
using Testcontainers.PostgreSql;
using WorkflowService.Benchmarks.Faults;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A real PostgreSQL: the server named by WORKFLOW_TESTS_POSTGRES (a connection string), else one Testcontainers
/// starts where a Docker engine answers, else a throwaway one from this machine's PostgreSQL binaries
/// (<see cref="OwnedPostgresServer"/>). Each test class gets a fresh database on it, dropped afterwards.
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
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Whatever stops Testcontainers or the local binaries from starting PostgreSQL becomes the reason the PostgreSQL tests are reported unavailable.")]
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

            if (File.Exists("/var/run/docker.sock") || Environment.GetEnvironmentVariable("DOCKER_HOST") is not null)
            {
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
                }
            }

            // Else a throwaway server from this machine's PostgreSQL binaries (as the postgres user where the tests run as
            // root), on a data directory and port of its own, stopped and deleted when the test process ends.
            if (OwnedPostgresServer.Unavailable() is { } missing)
            {
                _unavailable ??= $"{Variable} is not set, no Docker engine answers for Testcontainers, and no local server can be started: {missing}";
                return null;
            }

            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
                var owned = await OwnedPostgresServer.StartAsync(timeout.Token);
                AppDomain.CurrentDomain.ProcessExit += (_, _) => owned.DisposeAsync().AsTask().GetAwaiter().GetResult();
                _unavailable = null;
                return _server = owned.AdminConnectionString + ";Database=postgres";
            }
            catch (Exception e)
            {
                _unavailable = $"{Variable} is not set and a local PostgreSQL server could not be started: {e.Message}";
                return null;
            }
        }
        finally
        {
            Gate.Release();
        }
    }
}
