using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The change-stream wake-ups across nodes (WakeUp:Transport Auto on the MongoDB store). The broadcast transports' suite
/// (<see cref="CrossNodeWakeUpTests{TBackend}"/>) is about sending, coalescing and ignoring one's own echo; a change stream
/// sends nothing (the commit is the message), so this suite checks what it promises instead: another node's commit wakes
/// this node's workers and long-polls, and the node reports the stream healthy.
/// </summary>
public sealed class MongoChangeStreamCrossNodeTests : ServiceTest<MongoDbBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_signal_sent_through_another_node_wakes_this_nodes_workers_through_the_change_stream()
    {
        var database = await CreateDatabaseAsync();
        var (worker, _) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:10:00", ["Workers:NodeId"] = "worker" }, database: database);
        var (_, api) = await StartServiceAsync(new() { ["Workers:Enabled"] = "false", ["Workers:NodeId"] = "front" }, database: database);
        var stream = worker.Get<MongoChangeStreamWakeUp>();
        Assert.IsType<MongoChangeStreamWakeUp>(worker.Services.GetRequiredService<IWakeUpTransport>());
        await Eventually.WaitUntilAsync(() => stream.IsHealthy, what: "the worker's change stream is open");
        var name = Definitions.Unique("stream");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));

        // The API-only node takes the signal; only the stream can wake the worker node before its ten-minute poll.
        var instance = await api.StartAsync(name);
        await api.SignalAsync(instance.Id, "go", new { value = 1 });

        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal(1, done.Output!.Value.GetProperty("result").GetInt32());
        Assert.True(stream.NotificationsReceived >= 1);
    }
}
