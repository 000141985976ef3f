using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The transport contract across nodes, written once and run on every transport that crosses nodes, whether it sends
/// messages (PostgreSQL LISTEN/NOTIFY, Redis pub/sub: <see cref="BroadcastCrossNodeWakeUpTests{TBackend}"/> adds what
/// only a sender promises) or the store's commits are the message (the MongoDB change stream): a signal taken by one node
/// wakes another's workers, a commit on one node answers the long-polls on another (not at the re-check), and a killed
/// listener comes back by itself while the poll carries the work. The single-node half (in-process included) is
/// <see cref="Semantics.WakeUpTests{TBackend}"/>.
/// </summary>
/// <typeparam name="TTransport">The wake-up transport the backend's nodes run on; every test checks that they do.</typeparam>
public abstract class CrossNodeWakeUpTests<TBackend, TTransport> : ServiceTest<TBackend>
    where TBackend : StoreBackend, new()
    where TTransport : class, IListeningWakeUpTransport
{
    // Each test starts the nodes it is about on one database of its own.
    protected override bool UsesDefaultService => false;

    private const int Waiting = 40;

    /// <summary>Kills <paramref name="node"/>'s listening connection from the server's side.</summary>
    protected abstract Task KillListenerAsync(WorkflowServiceFactory node, BackendDatabase database);

    /// <summary>
    /// What the node that took a signal shows of it once another node's workers were woken: a sender sent a message; a
    /// change stream sent nothing, the commit being the message.
    /// </summary>
    protected abstract Task AssertTheSendingNodeAsync(TTransport sender);

    /// <summary>
    /// Waits until each node knows the other listens, where the transport waits for that before it sends (a sender
    /// sends no hints while no other node listens); nothing to wait for where the commit is the message.
    /// </summary>
    protected virtual Task HearEachOtherAsync(TTransport one, TTransport other) => Task.CompletedTask;

    /// <summary>
    /// The settings of a node that only serves the API: no workers, and every signal queued (none applied on arrival),
    /// so that the work is another node's.
    /// </summary>
    private static Dictionary<string, string?> Front() =>
        new() { ["Workers:Enabled"] = "false", ["Workers:NodeId"] = "front", ["Engine:ApplySignalsOnArrival"] = "false" };

    /// <summary><paramref name="node"/>'s wake-up transport, asserted to be a <typeparamref name="TTransport"/>.</summary>
    protected static TTransport Transport(WorkflowServiceFactory node) =>
        Assert.IsType<TTransport>(node.Services.GetRequiredService<IWakeUpTransport>());

    [Fact]
    public async Task A_signal_sent_through_another_node_wakes_this_nodes_workers()
    {
        var database = await CreateDatabaseAsync();
        var (worker, _) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:10:00", ["Workers:NodeId"] = "worker" }, database: database);
        var (front, api) = await StartServiceAsync(Front(), database: database);
        var (listener, sender) = (Transport(worker), Transport(front));
        var name = Definitions.Unique("notify");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        await Eventually.WaitUntilAsync(() => listener.IsHealthy && sender.IsHealthy);
        await HearEachOtherAsync(listener, sender);

        // The API-only node takes the signal; only a hint can wake the worker node before its ten-minute poll.
        var instance = await api.StartAsync(name);
        await api.SignalAsync(instance.Id, "go", new { value = 1 });

        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal(1, done.Output!.Value.GetProperty("result").GetInt32());
        await AssertTheSendingNodeAsync(sender);
        Assert.True(listener.NotificationsReceived >= 1);
    }

    [Fact]
    public async Task Long_polls_on_one_node_are_answered_by_the_hints_of_another_nodes_commits_not_by_the_recheck()
    {
        var database = await CreateDatabaseAsync();
        var (worker, _) = await StartServiceAsync(new() { ["Workers:NodeId"] = "worker" }, database: database);
        // A one-minute re-check: long-polls of a minute that are answered at all were answered by a hint.
        var (front, api) = await StartServiceAsync(new(Front()) { ["Workers:LongPollRecheck"] = "00:01:00" }, database: database);
        var name = Definitions.Unique("cross-poll");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var (workerWakeUps, frontWakeUps) = (Transport(worker), Transport(front));
        await Eventually.WaitUntilAsync(() => workerWakeUps.IsHealthy && frontWakeUps.IsHealthy);
        await HearEachOtherAsync(workerWakeUps, frontWakeUps);
        var instances = new List<InstanceView>();
        for (var i = 0; i < Waiting; i++)
        {
            instances.Add(await api.StartAsync(name));
        }

        var ct = TestContext.Current.CancellationToken;
        var polls = instances.Select(i => api.Http.GetFromJsonAsync<InstanceView>($"/instances/{i.Id}?waitFor=Completed&timeout=50", WorkflowServiceFactory.Json, ct)).ToList();
        var feed = front.Get<InstanceChangeFeed>();
        await Eventually.WaitUntilAsync(async () =>
            (await api.Http.GetFromJsonAsync<NodeMetricsView>("/metrics", WorkflowServiceFactory.Json, ct))!.LongPollsWaiting == Waiting
            && feed.ToRecheck().Count == Waiting, what: "every long-poll is held (GET /metrics longPollsWaiting)");

        // The front node only queues the signals; the worker node commits every change. The re-check's minute counts from the
        // node's start, which a slow machine can outlast while the test sets up: only a re-check from here on could answer.
        var watcher = front.Get<InstanceChangeWatcher>();
        var rechecksBefore = watcher.Rechecks;
        foreach (var instance in instances)
        {
            await api.SignalAsync(instance.Id, "go", new { value = 1 });
        }

        var answers = await Task.WhenAll(polls);

        Assert.All(answers, a => Assert.Equal(InstanceStatus.Completed, a!.Status));
        Assert.True(watcher.HintedReads >= 1);
        Assert.Equal(rechecksBefore, watcher.Rechecks);
        Assert.Equal(0, feed.Watched);
    }

    [Fact]
    public async Task With_the_listening_connection_killed_work_completes_by_the_poll_and_the_listener_comes_back()
    {
        var database = await CreateDatabaseAsync();
        var (worker, _) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:00:02", ["Workers:NodeId"] = "worker" }, database: database);
        var (_, api) = await StartServiceAsync(Front(), database: database);
        var listener = Transport(worker);
        await Eventually.WaitUntilAsync(() => listener.IsHealthy);
        var name = Definitions.Unique("lost");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);
        var subscriptions = listener.Subscriptions;

        await KillListenerAsync(worker, database);
        await api.SignalAsync(instance.Id, "go", new { value = 2 });
        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal(2, done.Output!.Value.GetProperty("result").GetInt32());

        await Eventually.WaitUntilAsync(() => listener.IsHealthy && listener.Subscriptions > subscriptions, what: "the listener is back");
        Assert.IsType<TTransport>(worker.Services.GetRequiredService<IWakeUpTransport>());
    }
}
