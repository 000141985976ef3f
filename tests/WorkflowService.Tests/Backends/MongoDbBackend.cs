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

    private static readonly ServerSource Source = new(Variable, "a MongoDB replica set");

    public override string Name => "mongodb";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var server = await ServerAsync();
        if (server is null)
        {
            Unavailable(Source.Unavailable!);
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
    public static Task<string?> ServerAsync() => Source.FindAsync(async ct =>
    {
        // A single-member replica set (--replSet, initiated by Testcontainers): transactions and change streams need one.
        var container = new MongoDbBuilder("mongo:7.0").WithReplicaSet("rs0").Build();
        await container.StartAsync(ct);
        // The member is known inside the container as 127.0.0.1:27017; from here it is the mapped port, so the driver talks
        // to it directly instead of following the set's own member list.
        return container.GetConnectionString().TrimEnd('/') + "/?directConnection=true";
    }, NoServer);
}
