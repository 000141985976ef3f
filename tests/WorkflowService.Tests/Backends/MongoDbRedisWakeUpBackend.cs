namespace WorkflowService.Tests.Backends;

/// <summary>
/// The MongoDB store with Redis wake-ups instead of its change stream: skipped with MongoDB's reason where there is no
/// replica set, with Redis's where there is no Redis.
/// </summary>
public sealed class MongoDbRedisWakeUpBackend : RedisWakeUpBackend
{
    protected override StoreBackend Store() => new MongoDbBackend();
}
