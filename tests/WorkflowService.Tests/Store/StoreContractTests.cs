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
    // The queue's contract: every signal the tests send through the API is queued, none applied on arrival.
    protected override Dictionary<string, string?> Settings => new() { ["Workers:Enabled"] = "false", ["Engine:ApplySignalsOnArrival"] = "false" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_commit_from_a_stale_read_is_rejected_as_a_concurrency_conflict()
    {
        var name = Definitions.Unique("stale");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        var instances = Factory.Get<IInstanceStore>();
        var snapshot = (await instances.GetInstanceAsync("", started.Id, Token))!;

        await instances.CommitAsync(WorkflowExecutor.Cancel(snapshot, "first writer", Factory.Get<IStoreClock>().Now()), Token);

        await Assert.ThrowsAsync<ConcurrencyConflictException>(() =>
            instances.CommitAsync(WorkflowExecutor.Cancel(snapshot, "second writer", Factory.Get<IStoreClock>().Now()), Token));
        var stored = (await instances.GetInstanceAsync("", started.Id, Token))!;
        Assert.Equal("first writer", stored.Error);
        Assert.Equal(snapshot.Version + 1, stored.Version);
    }

    [Fact]
    public async Task A_revoked_id_is_refused_for_its_remaining_life_and_a_job_lease_is_no_revocation()
    {
        var list = Factory.Get<IRevocationList>();
        var (revoked, ended, never, job) = (Unique("revoked"), Unique("ended"), Unique("never"), Unique("job"));
        Assert.False(await list.IsRevokedAsync(revoked, Token));

        await list.RevokeAsync(revoked, TimeSpan.FromHours(1), Token);
        await list.RevokeAsync(ended, TimeSpan.FromMilliseconds(-1), Token);
        await Factory.Get<IRetentionStore>().TryTakeLeaseAsync(job, "node-a", TimeSpan.FromHours(1), Token);

        Assert.True(await list.IsRevokedAsync(revoked, Token));
        Assert.False(await list.IsRevokedAsync(ended, Token));
        Assert.False(await list.IsRevokedAsync(never, Token));
        Assert.False(await list.IsRevokedAsync(job, Token));

        static string Unique(string what) => $"test-{what}:{Guid.NewGuid():N}";
    }

    [Fact]
    public async Task Claims_lease_due_signals_once_and_skip_leased_ones_until_the_lease_ends()
    {
        var name = Definitions.Unique("claims");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        var queue = Factory.Get<ISignalQueue>();

        var first = await queue.ClaimDueSignalsAsync("node-a", 10, TimeSpan.FromMinutes(5), Token);
        var second = await queue.ClaimDueSignalsAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);

        var claimed = Assert.Single(first);
        Assert.Empty(second);
        Assert.Equal(1, claimed.Attempts);
        Assert.Equal("node-a", claimed.LeaseOwner);
    }

    [Fact]
    public async Task A_deferred_signal_is_given_back_unleased_at_its_new_time_without_using_up_an_attempt()
    {
        var name = Definitions.Unique("defer");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        var queue = Factory.Get<ISignalQueue>();
        var claimed = Assert.Single(await queue.ClaimDueSignalsAsync("node-a", 10, TimeSpan.FromMinutes(5), Token));
        var later = Factory.Get<IStoreClock>().Now().After(TimeSpan.FromMinutes(1));

        Assert.False(await queue.DeferSignalAsync(claimed.Id, claimed.LeaseToken + 1, later, Token));
        Assert.True(await queue.DeferSignalAsync(claimed.Id, claimed.LeaseToken, later, Token));

        var stored = (await queue.GetSignalAsync("", claimed.Id, Token))!;
        Assert.Equal(SignalStatus.Pending, stored.Status);
        Assert.Equal(0, stored.Attempts);
        Assert.Null(stored.LeaseUntilMs);
        Assert.Equal(later, stored.DueAtMs);
        Assert.Empty(await queue.ClaimDueSignalsAsync("node-b", 10, TimeSpan.FromMinutes(5), Token));
    }

    [Fact]
    public async Task The_workers_claim_hands_each_signal_its_instance_as_stored_one_copy_per_signal()
    {
        var name = Definitions.Unique("claim-work");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go", new { value = 1 });
        await Api.SignalAsync(started.Id, "go", new { value = 2 });
        var instances = Factory.Get<IInstanceStore>();
        var queue = Factory.Get<ISignalQueue>();

        var claimed = await queue.ClaimDueWorkAsync("node-a", 10, TimeSpan.FromMinutes(5), Token);

        Assert.Equal(2, claimed.Count);
        Assert.True(claimed[0].Signal.DueAtMs <= claimed[1].Signal.DueAtMs);
        var stored = (await instances.GetInstanceAsync("", started.Id, Token))!;
        foreach (var work in claimed)
        {
            Assert.Equal("node-a", work.Signal.LeaseOwner);
            Assert.Equal(1, work.Signal.Attempts);
            Assert.Equivalent(stored, work.Instance, strict: true);
        }

        // A worker changes its instance as it runs: two signals of one instance must not share one object.
        Assert.NotSame(claimed[0].Instance, claimed[1].Instance);
        Assert.Empty(await queue.ClaimDueWorkAsync("node-b", 10, TimeSpan.FromMinutes(5), Token));
    }

    [Fact]
    public async Task A_commit_under_a_lost_lease_is_refused()
    {
        var name = Definitions.Unique("lost");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.SignalAsync(started.Id, "go");
        var instances = Factory.Get<IInstanceStore>();
        var queue = Factory.Get<ISignalQueue>();
        var clock = Factory.Get<IStoreClock>();
        var claimed = Assert.Single(await queue.ClaimDueSignalsAsync("node-a", 10, TimeSpan.FromMilliseconds(1), Token));
        var deadline = DateTime.UtcNow.AddSeconds(10);
        IReadOnlyList<SignalMessage> takenOver;
        do
        {
            // The 1 ms lease ends on the store's clock; node-b takes the signal over.
            takenOver = await queue.ClaimDueSignalsAsync("node-b", 10, TimeSpan.FromMinutes(5), Token);
            Assert.True(DateTime.UtcNow < deadline);
        }
        while (takenOver.Count == 0);

        var instance = (await instances.GetInstanceAsync("", started.Id, Token))!;
        var definition = (await Factory.Get<DefinitionRegistry>().GetAsync("", name, null, Token))!;
        var late = Factory.Get<WorkflowExecutor>().Resume(definition, instance, claimed, [], clock.Now());

        await Assert.ThrowsAsync<LeaseLostException>(() => instances.CommitAsync(late.Commit!, Token));
        Assert.Equal(InstanceStatus.Waiting, (await instances.GetInstanceAsync("", started.Id, Token))!.Status);
    }

    [Fact]
    public async Task Shutdown_releases_this_nodes_claims_so_another_node_can_take_them_at_once()
    {
        var (factory, api) = await StartServiceAsync([]);
        var name = Definitions.Unique("shutdown");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await api.StartAsync(name);
        var node = factory.Get<NodeIdentity>().Id;
        var queue = factory.Get<ISignalQueue>();
        var clock = factory.Get<IStoreClock>();
        var held = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = started.Id,
            Name = "go",
            Status = SignalStatus.Pending,
            DueAtMs = clock.NowMs(),
            Attempts = 1,
            LeaseOwner = node,
            LeaseToken = 99,
            LeaseUntilMs = clock.NowMs() + 3_600_000,
            CreatedAt = DateTime.UtcNow,
        };
        await queue.EnqueueSignalAsync(held, Token);

        var dispatcher = factory.Services.GetServices<IHostedService>().OfType<SignalDispatcher>().Single();
        using var bounded = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await dispatcher.StopAsync(bounded.Token);

        var released = (await queue.GetSignalAsync("", held.Id, Token))!;
        Assert.Null(released.LeaseOwner);
        Assert.Null(released.LeaseUntilMs);
        Assert.Equal(0, released.Attempts);
        Assert.Single(await queue.ClaimDueSignalsAsync("other-node", 10, TimeSpan.FromMinutes(1), Token));
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
    public async Task Every_instance_column_written_by_the_hand_written_sql_reads_back_the_same_through_both_paths()
    {
        var instances = Factory.Get<IInstanceStore>();
        var queries = Factory.Get<IOperatorQueries>();
        var created = new DateTime(2026, 11, 22, 10, 11, 12, DateTimeKind.Utc).AddTicks(1234560); // microseconds: PostgreSQL keeps no finer
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(),
            Tenant = "columns-tenant",
            DefinitionName = Definitions.Unique("columns"),
            DefinitionVersion = 3,
            Status = InstanceStatus.Waiting,
            BusinessKey = "business-" + Guid.NewGuid(),
            IdempotencyKey = "idem-" + Guid.NewGuid(),
            InputJson = """{"in":1}""",
            VariablesJson = """{"v":"x"}""",
            OutputJson = """{"out":true}""",
            Error = "an error",
            WaitKind = WaitKind.Parallel,
            WaitStepId = "gather",
            WaitSignal = "go",
            WaitSignalId = Guid.NewGuid(),
            WaitTaskId = Guid.NewGuid(),
            ParentInstanceId = Guid.NewGuid(),
            ParentWaitId = Guid.NewGuid(),
            BranchesJson = """[{"name":"a"}]""",
            ParkedSignals = 2,
            HistoryLength = 0,
            CreatedAt = created,
            UpdatedAt = created.AddSeconds(1),
            CompletedAt = created.AddSeconds(2),
        };
        await instances.CreateInstanceAsync(new WaitPointCommit { Instance = instance, ExpectedVersion = -1 }, Token);

        var raw = (await instances.GetInstanceAsync(instance.Tenant, instance.Id, Token))!;
        var forEngine = (await instances.GetInstanceForEngineAsync(instance.Id, Token))!;
        var byEfCore = Assert.Single((await queries.QueryInstancesAsync(
            new InstanceQuery(DefinitionName: instance.DefinitionName, BusinessKey: instance.BusinessKey, CreatedFrom: created.AddMilliseconds(-1),
                CreatedTo: created.AddMilliseconds(1), Tenant: instance.Tenant), Token)).Items);
        var batch = Assert.Single(await instances.GetInstancesAsync([instance.Id, Guid.NewGuid()], Token));
        foreach (var read in new[] { raw, forEngine, byEfCore, batch })
        {
            Assert.Equivalent(instance, read, strict: true);
            Assert.Equal(DateTimeKind.Utc, read.CreatedAt.Kind);
        }

        Assert.Equal(instance.Id, (await instances.FindInstanceAsync(instance.Tenant, instance.IdempotencyKey, instance.DefinitionName, null, Token))!.Id);
        // It has ended (completedAt is set), so its business key names no open instance: a start with it would make a new one.
        Assert.Null(await instances.FindInstanceAsync(instance.Tenant, null, instance.DefinitionName, instance.BusinessKey, Token));
        // Read by its key, an ended instance is still found: the newest with the key.
        Assert.Equal(instance.Id, await instances.FindNewestInstanceIdAsync(instance.Tenant, instance.DefinitionName, instance.BusinessKey!, Token));

        // The default tenant (and any other) neither reads it by its id, lists it nor finds it by its keys.
        Assert.Null(await instances.GetInstanceAsync("", instance.Id, Token));
        Assert.Null(await instances.GetInstanceAsync("other", instance.Id, Token));
        Assert.Empty((await queries.QueryInstancesAsync(new InstanceQuery(DefinitionName: instance.DefinitionName), Token)).Items);
        Assert.Empty((await queries.QueryInstancesAsync(new InstanceQuery(DefinitionName: instance.DefinitionName, Tenant: "other"), Token)).Items);
        Assert.Null(await instances.FindInstanceAsync("", instance.IdempotencyKey, instance.DefinitionName, null, Token));
        Assert.Null(await instances.FindInstanceAsync("", null, instance.DefinitionName, instance.BusinessKey, Token));
        Assert.Null(await instances.FindNewestInstanceIdAsync("other", instance.DefinitionName, instance.BusinessKey!, Token));
    }

    [Fact]
    public async Task A_signal_is_queued_in_one_statement_only_while_its_instance_is_open()
    {
        var queue = Factory.Get<ISignalQueue>();
        var queries = Factory.Get<IOperatorQueries>();
        var clock = Factory.Get<IStoreClock>();
        var name = Definitions.Unique("if-open");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var open = await Api.StartAsync(name);
        var ended = await Api.StartAsync(name);
        using (var cancel = await Api.Http.PostAsync($"/instances/{ended.Id}/terminate", null, Token))
        {
            cancel.EnsureSuccessStatusCode();
        }

        SignalMessage Signal(Guid instanceId, string? key) => new()
        {
            Id = Guid.CreateVersion7(),
            InstanceId = instanceId,
            Name = "other",
            Status = SignalStatus.Pending,
            DueAtMs = clock.NowMs(),
            IdempotencyKey = key,
            CreatedAt = DateTime.UtcNow,
        };

        var first = Signal(open.Id, "once");
        // An instance of the default tenant takes no signal sent in another tenant's name.
        Assert.Equal((null, false), await queue.EnqueueSignalIfOpenAsync(Signal(open.Id, null), "acme", Token));
        var (stored, created) = await queue.EnqueueSignalIfOpenAsync(first, "", Token);
        Assert.True(created);
        Assert.Equal(first.Id, stored!.Id);

        var (again, createdAgain) = await queue.EnqueueSignalIfOpenAsync(Signal(open.Id, "once"), "", Token);
        Assert.False(createdAgain);
        Assert.Equal(first.Id, again!.Id);

        Assert.Equal((null, false), await queue.EnqueueSignalIfOpenAsync(Signal(ended.Id, null), "", Token));
        Assert.Equal((null, false), await queue.EnqueueSignalIfOpenAsync(Signal(Guid.NewGuid(), null), "", Token));
        Assert.DoesNotContain(await queries.ListSignalsAsync((await Factory.Get<IInstanceStore>().GetInstanceAsync("", ended.Id, Token))!, Token), s => s.Name == "other");
    }

    [Fact]
    public async Task Concurrent_commits_succeed_or_conflict_each_on_its_own()
    {
        // Many commits at once share transactions where the store groups them (every store): a stale one among them must fail
        // alone, and every other one must stand.
        var instances = Factory.Get<IInstanceStore>();
        var name = Definitions.Unique("group");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var snapshots = new List<WorkflowInstance>();
        for (var i = 0; i < 40; i++)
        {
            var started = await Api.StartAsync(name);
            snapshots.Add((await instances.GetInstanceAsync("", started.Id, Token))!);
        }

        var stale = snapshots.Where((_, i) => i % 2 == 1).ToList();
        foreach (var snapshot in stale)
        {
            await instances.CommitAsync(WorkflowExecutor.Cancel(snapshot.Clone(), "first writer", Factory.Get<IStoreClock>().Now()), Token);
        }

        var outcomes = await Task.WhenAll(snapshots.Select(async snapshot =>
        {
            try
            {
                await instances.CommitAsync(WorkflowExecutor.Cancel(snapshot.Clone(), "second writer", Factory.Get<IStoreClock>().Now()), Token);
                return "committed";
            }
            catch (ConcurrencyConflictException)
            {
                return "conflict";
            }
        }));

        for (var i = 0; i < snapshots.Count; i++)
        {
            var stored = (await instances.GetInstanceAsync("", snapshots[i].Id, Token))!;
            var history = await instances.GetHistoryAsync(stored, Token);
            Assert.Equal(i % 2 == 1 ? "conflict" : "committed", outcomes[i]);
            Assert.Equal(i % 2 == 1 ? "first writer" : "second writer", stored.Error);
            Assert.Equal(snapshots[i].Version + 1, stored.Version);
            Assert.Equal(stored.HistoryLength, history.Count);
        }
    }
}

public sealed class SqliteStoreContractTests : StoreContractTests<SqliteBackend>;

public sealed class PostgresStoreContractTests : StoreContractTests<PostgresBackend>;

public sealed class MongoDbStoreContractTests : StoreContractTests<MongoDbBackend>;
