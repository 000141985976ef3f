using System.Net.Http.Json;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// The single-node half of the transport contract, on every transport (in-process with SQLite, LISTEN/NOTIFY and Redis
/// with PostgreSQL): a node's own signals wake it at once; the bounded poll picks up what no wake-up announced (a lost
/// hint). The cross-node half is <see cref="Cluster.CrossNodeWakeUpTests{TBackend,TTransport}"/>.
/// </summary>
public abstract class WakeUpTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // Each test starts a service with the poll interval it is about and asserts on that node's metrics.
    protected override bool UsesDefaultService => false;

    // The tests are about waking the workers: every signal is queued for them, none applied on arrival.
    private const string QueuedOnly = "Engine:ApplySignalsOnArrival";

    [Fact]
    public async Task A_signal_wakes_the_workers_at_once_without_waiting_for_the_poll()
    {
        // A ten-minute poll: if the wake-up did not work, the instance would not complete within the test's deadline.
        var (_, api) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:10:00", [QueuedOnly] = "false" });
        var name = Definitions.Unique("wake");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        // A server transport connects in the background after start-up; this node's own signals wake it in process
        // meanwhile, so the health asserted below is awaited first rather than raced.
        await Eventually.WaitUntilAsync(async () =>
            (await api.Http.GetFromJsonAsync<WorkflowService.Api.NodeMetricsView>("/metrics", WorkflowServiceFactory.Json))!.WakeUpHealthy,
            what: "the wake-up transport is healthy");

        for (var i = 0; i < 5; i++)
        {
            var instance = await api.StartAsync(name);
            await api.SignalAsync(instance.Id, "go", new { value = i });
            await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        }

        var metrics = await api.Http.GetFromJsonAsync<WorkflowService.Api.NodeMetricsView>("/metrics", WorkflowServiceFactory.Json);
        Assert.True(metrics!.SignalsHandled >= 5);
        Assert.True(metrics.WakeUpHealthy);
        // The runtime's JIT work so far: a node that has served requests has compiled code, and said how long it took.
        Assert.True(metrics.JitCompiledMethods > 0);
        Assert.True(metrics.JitCompilationMs > 0);
        // Every claim counted its signal's age (due time to claim) in one bucket of the histogram.
        Assert.True(metrics.SignalAgeAtClaim.Count >= 5);
        Assert.Equal(metrics.SignalAgeAtClaim.Count, metrics.SignalAgeAtClaim.Buckets.Sum(b => b.Count));
        Assert.Null(metrics.SignalAgeAtClaim.Buckets[^1].UpToMs);
        Assert.Equal(0, metrics.LongPollsWaiting);
    }

    [Fact]
    public async Task A_burst_of_signals_due_later_is_each_handled_at_its_due_time_not_at_the_next_poll()
    {
        // A ten-minute poll: a signal the dispatcher slept past would wait for it, far beyond the test's deadline.
        var (_, api) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:10:00", [QueuedOnly] = "false" });
        var name = Definitions.Unique("due-burst");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instances = new List<WorkflowService.Api.InstanceView>();
        for (var i = 0; i < 12; i++)
        {
            instances.Add(await api.StartAsync(name));
        }

        // Due a moment later, one after another: the first due time wakes the dispatcher, whose claim finds only the
        // signals due by then; the rest were announced before it slept, and nothing else will announce them.
        var due = DateTimeOffset.UtcNow.AddMilliseconds(500);
        for (var i = 0; i < instances.Count; i++)
        {
            await api.SignalAsync(instances[i].Id, "go", new { value = i }, dueAt: due.AddMilliseconds(5 * i));
        }

        for (var i = 0; i < instances.Count; i++)
        {
            var done = await api.WaitForAsync(instances[i].Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
            Assert.Equal(i, done.Output!.Value.GetProperty("result").GetInt32());
        }
    }

    [Fact]
    public async Task A_signal_written_without_a_wake_up_is_picked_up_by_the_poll()
    {
        var (factory, api) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:00:00.100", [QueuedOnly] = "false" });
        var name = Definitions.Unique("poll");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);

        // Written straight to the store, as another node would: this process gets no wake-up for it.
        await factory.Get<ISignalQueue>().EnqueueSignalAsync(new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = instance.Id,
            Name = "go",
            PayloadJson = """{"value":9}""",
            DueAtMs = factory.Get<IStoreClock>().NowMs(),
            CreatedAt = DateTime.UtcNow,
        }, TestContext.Current.CancellationToken);

        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(9, done.Output!.Value.GetProperty("result").GetInt32());
    }
}

public sealed class SqliteWakeUpTests : WakeUpTests<SqliteBackend>;

public sealed class PostgresWakeUpTests : WakeUpTests<PostgresBackend>;

public sealed class MongoDbWakeUpTests : WakeUpTests<MongoDbBackend>;

public sealed class RedisWakeUpTests : WakeUpTests<RedisWakeUpBackend>;
