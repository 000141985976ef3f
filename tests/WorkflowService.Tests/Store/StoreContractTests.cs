using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>Store contract behaviour on every store, driven through the service's own components.</summary>
public abstract class StoreContractTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Workers:Enabled"] = "false" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_commit_from_a_stale_read_is_rejected_as_a_concurrency_conflict()
    {
        var name = Definitions.Unique("stale");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        var store = Factory.Store;
        var snapshot = (await store.GetInstanceAsync(started.Id, Token))!;

        await store.CommitAsync(WorkflowExecutor.Cancel(snapshot, "first writer", DateTime.UtcNow), Token);

        await Assert.ThrowsAsync<ConcurrencyConflictException>(() =>
            store.CommitAsync(WorkflowExecutor.Cancel(snapshot, "second writer", DateTime.UtcNow), Token));
        var stored = (await store.GetInstanceAsync(started.Id, Token))!;
        Assert.Equal("first writer", stored.Error);
        Assert.Equal(snapshot.Version + 1, stored.Version);
    }

    [Fact]
    public async Task Claims_lease_due_signals_once_and_skip_leased_ones_until_the_lease_ends()
    {
        var name = Definitions.Unique("claims");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        var store = Factory.Store;

        var first = await store.ClaimDueSignalsAsync("node-a", 10, TimeSpan.FromMinutes(5), Token);
        var second = await store.ClaimDueSignalsAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);

        var claimed = Assert.Single(first);
        Assert.Empty(second);
        Assert.Equal(1, claimed.Attempts);
        Assert.Equal("node-a", claimed.LeaseOwner);
    }

    [Fact]
    public async Task A_commit_under_a_lost_lease_is_refused()
    {
        var name = Definitions.Unique("lost");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        var store = Factory.Store;
        var claimed = Assert.Single(await store.ClaimDueSignalsAsync("node-a", 10, TimeSpan.FromMilliseconds(1), Token));
        var deadline = DateTime.UtcNow.AddSeconds(10);
        IReadOnlyList<SignalMessage> takenOver;
        do
        {
            // The 1 ms lease ends on the store's clock; node-b takes the signal over.
            takenOver = await store.ClaimDueSignalsAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);
            Assert.True(DateTime.UtcNow < deadline);
        }
        while (takenOver.Count == 0);

        var instance = (await store.GetInstanceAsync(started.Id, Token))!;
        var definition = (await Factory.Get<DefinitionRegistry>().GetAsync(name, null, Token))!;
        var late = Factory.Get<WorkflowExecutor>().Resume(definition, instance, claimed, [], DateTime.UtcNow, store.NowMs());

        await Assert.ThrowsAsync<LeaseLostException>(() => store.CommitAsync(late.Commit!, Token));
        Assert.Equal(InstanceStatus.Waiting, (await store.GetInstanceAsync(started.Id, Token))!.Status);
    }

    [Fact]
    public async Task Shutdown_releases_this_nodes_claims_so_another_node_can_take_them_at_once()
    {
        var (factory, api) = await StartServiceAsync([]);
        var name = Definitions.Unique("shutdown");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await api.StartAsync(name);
        var node = factory.Get<NodeIdentity>().Id;
        var store = factory.Store;
        var held = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = started.Id,
            Name = "go",
            Status = SignalStatus.Pending,
            DueAtMs = store.NowMs(),
            Attempts = 1,
            LeaseOwner = node,
            LeaseToken = 99,
            LeaseUntilMs = store.NowMs() + 3_600_000,
            CreatedAt = DateTime.UtcNow,
        };
        await store.EnqueueSignalAsync(held, Token);

        var dispatcher = factory.Services.GetServices<IHostedService>().OfType<SignalDispatcher>().Single();
        using var bounded = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await dispatcher.StopAsync(bounded.Token);

        var released = (await store.GetSignalAsync(held.Id, Token))!;
        Assert.Null(released.LeaseOwner);
        Assert.Null(released.LeaseUntilMs);
        Assert.Equal(0, released.Attempts);
        Assert.Single(await store.ClaimDueSignalsAsync("other-node", 10, TimeSpan.FromMinutes(1), Token));
    }

    [Fact]
    public async Task A_signal_for_an_ended_instance_that_was_queued_before_the_end_is_closed_as_unmatched()
    {
        var name = Definitions.Unique("close");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "something-else");
        using var cancel = await Api.Http.PostAsync($"/instances/{started.Id}/cancel", null, Token);

        var signal = Assert.Single(await Api.SignalsAsync(started.Id));
        Assert.Equal(SignalStatus.Unmatched, signal.Status);
    }

    [Fact]
    public async Task A_database_with_another_schema_version_stops_start_up_with_a_clear_message()
    {
        var database = await CreateDatabaseAsync();
        var (first, _) = await StartServiceAsync(new() { ["Workers:Enabled"] = "false" }, database: database);
        await using (var db = await first.Get<Microsoft.EntityFrameworkCore.IDbContextFactory<WorkflowService.Storage.Relational.WorkflowDbContext>>()
                         .CreateDbContextAsync(Token))
        {
            await db.Schema.ExecuteUpdateAsync(u => u.SetProperty(v => v.Version, 99), Token);
        }

        var second = Own(new WorkflowServiceFactory(database.Settings.Concat(new Dictionary<string, string?> { ["Workers:Enabled"] = "false" }).ToDictionary()));

        var error = Assert.ThrowsAny<Exception>(() => second.CreateClient());
        Assert.Contains("schema 99", error.ToString());
    }
}

public sealed class SqliteStoreContractTests : StoreContractTests<SqliteBackend>;

public sealed class PostgresStoreContractTests : StoreContractTests<PostgresBackend>;
