using MongoDB.Driver;
using Testcontainers.MongoDb;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A real MongoDB replica set: the server named by WORKFLOW_TESTS_MONGODB (a replica-set connection string), else a
/// single-member replica set Testcontainers starts where a Docker engine answers, else the tests are skipped with the
/// reason (failed where CI requires "mongodb"). No mongod can be installed from this machine's package sources, so there
/// is no third, local source as PostgreSQL and Redis have. Each test class gets a database of its own, dropped afterwards.
/// </summary>
public sealed class MongoDbBackend : StoreBackend
{
    public const string Variable = "WORKFLOW_TESTS_MONGODB";

    /// <summary>The reason the MongoDB suites are skipped where neither source is there.</summary>
    public const string NoServer = "no MongoDB server (set WORKFLOW_TESTS_MONGODB or run a Docker engine)";

    private static readonly SemaphoreSlim Gate = new(1, 1);
    private static string? _server;
    private static string? _unavailable;

    public override string Name => "mongodb";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var server = await ServerAsync();
        if (server is null)
        {
            Unavailable(_unavailable!);
        }

        var name = $"wf_test_{Guid.NewGuid():N}";
        var settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "MongoDb",
            ["Store:ConnectionString"] = server,
            ["Store:Database"] = name,
        };
        return new BackendDatabase(settings, async () =>
        {
            using var client = new MongoClient(server);
            await client.DropDatabaseAsync(name);
        });
    }

    /// <summary>The replica set's connection string, found once per test run.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Whatever stops Testcontainers from starting the replica set becomes the reason its tests are reported unavailable.")]
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
                _unavailable = NoServer;
                return null;
            }

            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
                // A single-member replica set (--replSet, initiated by Testcontainers): transactions and change streams need one.
                var container = new MongoDbBuilder("mongo:7.0").WithReplicaSet("rs0").Build();
                await container.StartAsync(timeout.Token);
                // The member is known inside the container as 127.0.0.1:27017; from here it is the mapped port, so the
                // driver talks to it directly instead of following the set's own member list.
                return _server = container.GetConnectionString().TrimEnd('/') + "/?directConnection=true";
            }
            catch (Exception e)
            {
                _unavailable = $"{Variable} is not set and Testcontainers could not start a MongoDB replica set: {e.Message}";
                return null;
            }
        }
        finally
        {
            Gate.Release();
        }
    }
}
