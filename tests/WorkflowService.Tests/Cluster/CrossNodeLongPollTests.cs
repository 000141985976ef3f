using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>Long-polls held on a node that does not run the instances: another node's commits answer them.</summary>
public sealed class CrossNodeLongPollTests : ServiceTest<PostgresBackend>
{
    // Each test starts two nodes of its own on one database of its own.
    protected override bool UsesDefaultService => false;

    private const int Waiting = 40;

    [Fact]
    public async Task Long_polls_on_an_api_only_node_are_answered_when_another_node_completes_their_instances_with_one_read_a_period_for_all()
    {
        var database = await CreateDatabaseAsync();
        var (worker, _) = await StartServiceAsync(new() { ["Workers:NodeId"] = "worker" }, database: database);
        var (front, api) = await StartServiceAsync(new() { ["Workers:Enabled"] = "false", ["Workers:NodeId"] = "front" }, database: database);
        _ = worker.Services; // started
        var name = Definitions.Unique("cross-poll");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instances = new List<InstanceView>();
        for (var i = 0; i < Waiting; i++)
        {
            instances.Add(await api.StartAsync(name));
        }

        var ct = TestContext.Current.CancellationToken;
        var polls = instances.Select(i => api.Http.GetFromJsonAsync<InstanceView>($"/instances/{i.Id}?waitFor=Completed&timeout=60", WorkflowServiceFactory.Json, ct)).ToList();
        var feed = front.Get<InstanceChangeFeed>();
        var watcher = front.Get<InstanceChangeWatcher>();
        await Eventually.WaitUntilAsync(() => front.Get<LongPollGate>().InUse == Waiting && feed.ToRecheck().Count == Waiting);
        var rechecksBefore = watcher.Rechecks;

        // The front node only queues the signals; the worker node commits every change.
        foreach (var instance in instances)
        {
            await api.SignalAsync(instance.Id, "go", new { value = 1 });
        }

        var answers = await Task.WhenAll(polls);

        Assert.All(answers, a => Assert.Equal(InstanceStatus.Completed, a!.Status));
        Assert.True(watcher.Rechecks > rechecksBefore, "no recheck answered the long-polls");
        // Forty long-polls, one query a period: not forty.
        Assert.Equal(watcher.Rechecks, watcher.Reads);
        Assert.Equal(0, feed.Watched);
    }
}
