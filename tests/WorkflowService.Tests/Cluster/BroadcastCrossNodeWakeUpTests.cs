using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// What only the transports that send their hints (<see cref="BroadcastWakeUp"/> over PostgreSQL LISTEN/NOTIFY or Redis
/// pub/sub) promise on top of <see cref="CrossNodeWakeUpTests{TBackend,TTransport}"/>: the node that took a signal sent a
/// message for it, a node ignores its own echo, and a burst of commits is coalesced into fewer messages.
/// </summary>
public abstract class BroadcastCrossNodeWakeUpTests<TBackend> : CrossNodeWakeUpTests<TBackend, BroadcastWakeUp>
    where TBackend : StoreBackend, new()
{
    protected override Task AssertTheSendingNodeAsync(BroadcastWakeUp sender)
    {
        Assert.True(sender.NotificationsSent >= 1);
        return Task.CompletedTask;
    }

    protected override Task HearEachOtherAsync(BroadcastWakeUp one, BroadcastWakeUp other) =>
        Eventually.WaitUntilAsync(() => one.PeersListening && other.PeersListening, what: "each node heard the other say it listens");

    [Fact]
    public async Task A_node_alone_sends_no_hints_only_that_it_listens_and_ignores_its_own_echo()
    {
        var (node, api) = await StartServiceAsync(new() { ["Engine:ApplySignalsOnArrival"] = "false" });
        var transport = Transport(node);
        // Once its listener has been open long enough to have heard any other node, and heard none.
        await Eventually.WaitUntilAsync(() => transport.WithholdingHints, what: "the node knows it is alone");
        var name = Definitions.Unique("alone");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var (sentBefore, withheldBefore) = (transport.NotificationsSent, transport.NotificationsWithheld);

        await RunBurstAsync(api, name);

        Assert.False(transport.PeersListening);
        Assert.True(transport.NotificationsWithheld - withheldBefore >= 50, $"{transport.NotificationsWithheld - withheldBefore} hints withheld");
        // What it sent meanwhile said only that it listens: every announce interval at most.
        Assert.InRange(transport.NotificationsSent - sentBefore, 0, 2);
        // Its own messages came back over the bus (it is subscribed) and were dropped there.
        Assert.Equal(0, transport.NotificationsReceived);
    }

    [Fact]
    public async Task With_another_node_listening_a_burst_of_commits_is_coalesced_into_fewer_messages()
    {
        var database = await CreateDatabaseAsync();
        var (node, api) = await StartServiceAsync(new() { ["Engine:ApplySignalsOnArrival"] = "false" }, database: database);
        var (other, _) = await StartServiceAsync(new() { ["Workers:Enabled"] = "false", ["Workers:NodeId"] = "other" }, database: database);
        var (transport, peer) = (Transport(node), Transport(other));
        await Eventually.WaitUntilAsync(() => transport.IsHealthy && peer.IsHealthy);
        await HearEachOtherAsync(transport, peer);
        var name = Definitions.Unique("burst");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));

        await RunBurstAsync(api, name);

        Assert.True(transport.NotificationsSent >= 2);
        Assert.True(transport.NotificationsSent < transport.NotificationsRequested,
            $"{transport.NotificationsSent} messages for {transport.NotificationsRequested} hints: nothing was coalesced");
        Assert.True(peer.NotificationsReceived >= 1);
    }

    /// <summary>Fifty round trips at once: fifty commits, each asking for a hint.</summary>
    private static async Task RunBurstAsync(ApiClient api, string name)
    {
        var instances = await Task.WhenAll(Enumerable.Range(0, 50).Select(_ => api.StartAsync(name)));
        await Task.WhenAll(instances.Select(i => api.SignalAsync(i.Id, "go", new { value = 2 })));
        foreach (var instance in instances)
        {
            await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        }
    }
}
