using Testcontainers.Redis;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A store with Redis wake-ups (<c>WakeUp:Transport</c> Redis runs on any store): the PostgreSQL store here, another in a
/// subclass (<see cref="MongoDbRedisWakeUpBackend"/>). Redis is the server named by WORKFLOW_TESTS_REDIS (a
/// StackExchange.Redis configuration string), else one Testcontainers starts where a Docker engine answers, else a throwaway
/// <c>redis-server</c> from Debian's package on a free port (<see cref="OwnedRedisServer"/>), else the tests are skipped
/// with the reason (failed where CI requires "redis").
/// </summary>
public class RedisWakeUpBackend : StoreBackend
{
    public const string Variable = "WORKFLOW_TESTS_REDIS";
    private static readonly ServerSource Source = new(Variable, "Redis");

    public override string Name => "redis";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var redis = await ServerAsync();
        if (redis is null)
        {
            Unavailable(Source.Unavailable!);
        }

        var database = await Store().CreateDatabaseAsync();
        database.Settings["WakeUp:Transport"] = "Redis";
        database.Settings["WakeUp:Redis:ConnectionString"] = redis;
        // A channel of the test class's own: other classes' nodes on the same server are not its nodes.
        database.Settings["WakeUp:Redis:Channel"] = $"wf-test-{Guid.NewGuid():N}";
        return database;
    }

    /// <summary>The store under the wake-ups (asked only once Redis is there, so that no database is made for nothing).</summary>
    protected virtual StoreBackend Store() => new PostgresBackend();

    /// <summary>The Redis configuration string, found once per test run.</summary>
    public static Task<string?> ServerAsync() => Source.FindAsync(
        async ct =>
        {
            var container = new RedisBuilder("redis:7").Build();
            await container.StartAsync(ct);
            return container.GetConnectionString();
        },
        OwnedRedisServer.Unavailable,
        async ct =>
        {
            var owned = await OwnedRedisServer.StartAsync(ct);
            return (owned.ConnectionString, owned);
        });
}
