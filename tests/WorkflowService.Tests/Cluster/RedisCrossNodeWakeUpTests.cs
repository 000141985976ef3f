using StackExchange.Redis;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.WakeUp.Redis;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The cross-node contract on Redis pub/sub wake-ups, whichever store is under them: the listener is killed the same
/// way on every store (CLIENT KILL of the node's subscriber connection, on the Redis server RedisWakeUpBackend's settings name).
/// </summary>
public abstract class RedisCrossNodeWakeUpTests<TBackend> : BroadcastCrossNodeWakeUpTests<TBackend>
    where TBackend : RedisWakeUpBackend, new()
{
    protected override async Task KillListenerAsync(WorkflowServiceFactory node, BackendDatabase database)
    {
        var clientName = node.Get<RedisWakeUpBus>().ClientName;
        await using var admin = await ConnectionMultiplexer.ConnectAsync(database.Settings["WakeUp:Redis:ConnectionString"]! + ",allowAdmin=true");
        var server = admin.GetServer(admin.GetEndPoints()[0]);
        var clients = (await server.ClientListAsync()).Where(c => c.Name == clientName).ToList();
        Assert.NotEmpty(clients);
        foreach (var client in clients)
        {
            await server.ClientKillAsync(client.Id);
        }
    }
}

public sealed class RedisCrossNodeTests : RedisCrossNodeWakeUpTests<RedisWakeUpBackend>;

public sealed class MongoDbRedisCrossNodeTests : RedisCrossNodeWakeUpTests<MongoDbRedisWakeUpBackend>;
