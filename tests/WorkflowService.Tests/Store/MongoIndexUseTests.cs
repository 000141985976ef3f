using System.Net.Http.Json;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>
/// The MongoDB store's queries on fields whose index is partial (only documents that have the field are in it) use that
/// index. The query planner considers a partial index only when the query's filter implies the index's filter, and an
/// equality on a string does not imply "is a string" to it: without the type named in the query, every such lookup is a
/// collection scan that the results alone never show. Read from the server's own count of each index's uses
/// ($indexStats), before and after the store's call.
/// </summary>
public sealed class MongoIndexUseTests : ServiceTest<MongoDbBackend>
{
    protected override Dictionary<string, string?> Settings => new() { ["Workers:Enabled"] = "false" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private MongoWorkflowStore Store => Factory.Get<MongoWorkflowStore>();

    [Fact]
    public async Task A_start_repeated_with_its_idempotency_key_finds_the_first_through_the_keys_index()
    {
        var name = Definitions.Unique("idem-index");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var key = Guid.NewGuid().ToString("N");
        var first = await Api.StartAsync(name, idempotencyKey: key);

        var found = await UsesAsync(MongoWorkflowStore.InstancesCollection, "tenant_idempotencyKey",
            () => Store.FindInstanceAsync("", key, name, null, Token));

        Assert.Equal(first.Id, found?.Id);
    }

    [Fact]
    public async Task An_open_instance_is_found_by_its_business_key_through_the_open_business_keys_index()
    {
        var name = Definitions.Unique("business-index");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var first = await Api.StartAsync(name, businessKey: "claim-7");

        var found = await UsesAsync(MongoWorkflowStore.InstancesCollection, "tenant_definition_openBusinessKey",
            () => Store.FindInstanceAsync("", null, name, "claim-7", Token));

        Assert.Equal(first.Id, found?.Id);
    }

    [Fact]
    public async Task A_nodes_claims_are_released_through_the_lease_owner_index()
    {
        var name = Definitions.Unique("owner-index");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        Assert.Single(await Store.ClaimDueSignalsAsync("node-index", 10, TimeSpan.FromMinutes(5), Token));

        var released = await UsesAsync(MongoWorkflowStore.SignalsCollection, "leaseOwner", () => Store.ReleaseLeasesAsync("node-index", Token));

        Assert.Equal(1, released);
    }

    [Fact]
    public async Task Ended_instances_past_their_retention_are_counted_through_the_completion_index()
    {
        var name = Definitions.Unique("retention-index");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        using var cancelled = await Api.Http.PostAsJsonAsync($"/instances/{started.Id}/cancel", new { reason = "ended for retention" }, Token);
        cancelled.EnsureSuccessStatusCode();

        var expired = await UsesAsync(MongoWorkflowStore.InstancesCollection, "completedAt",
            () => Store.CountExpiredAsync(new RetentionScope(DateTime.UtcNow.AddDays(1), name, []), Token));

        Assert.Equal(1, expired);
    }

    /// <summary>Runs <paramref name="call"/> and checks that the server counted a use of <paramref name="index"/> meanwhile.</summary>
    private async Task<T> UsesAsync<T>(string collection, string index, Func<Task<T>> call)
    {
        var before = await IndexUsesAsync(collection, index);
        var result = await call();
        var after = await IndexUsesAsync(collection, index);
        Assert.True(after > before, $"the {collection} collection's index {index} was not used ({before} uses before the call, {after} after)");
        return result;
    }

    private async Task<long> IndexUsesAsync(string collection, string index)
    {
        var stages = new[] { new BsonDocument("$indexStats", new BsonDocument()), new BsonDocument("$match", new BsonDocument("name", index)) };
        var stats = await Store.Database.GetCollection<BsonDocument>(collection)
            .Aggregate<BsonDocument>(stages, cancellationToken: Token).ToListAsync(Token);
        var found = Assert.Single(stats);
        return found["accesses"]["ops"].ToInt64();
    }
}
