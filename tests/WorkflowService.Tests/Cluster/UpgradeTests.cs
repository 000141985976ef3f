using System.Collections.Concurrent;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Upgrading a database the previous release wrote (<see cref="PreviousRelease"/>, schema 5, built from its commit) with
/// this build: every waiting, timed, parked and ended instance survives the upgrade and completes; and, during a rolling
/// deploy, nodes of both releases share one database while the new one migrates it, and both keep serving.
/// </summary>
public abstract class UpgradeTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override bool UsesDefaultService => false;

    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task A_database_of_the_previous_release_upgrades_and_every_instance_in_it_completes()
    {
        var previous = await PreviousRelease.ServiceDllAsync();
        var database = await CreateDatabaseAsync();

        // The previous release creates the database and leaves work in every state in it.
        var names = new Names();
        Guid waiting, timed, parked, task, ended;
        await using (var old = await TestServiceProcess.StartAsync("previous", database.Settings, serviceDll: previous))
        {
            using var client = old.CreateClient();
            var api = new ApiClient(client);
            await names.PublishAsync(api);
            // The timer is due well after the upgrade: the new build has to fire it.
            timed = (await api.StartAsync(names.Timer)).Id;
            waiting = (await api.StartAsync(names.Signal)).Id;
            parked = (await api.StartAsync(names.TwoWaits)).Id;
            task = (await api.StartAsync(names.Task)).Id;
            ended = (await api.StartAsync(names.Signal)).Id;
            await api.SignalAsync(parked, "b", new { value = "early" });
            await api.SignalAsync(ended, "go", new { value = "before" });
            await api.WaitForAsync(ended, InstanceStatus.Completed, Deadline);
            Assert.Equal(WaitKind.Timer, (await api.WaitForAsync(timed, InstanceStatus.Waiting, Deadline)).Wait?.Kind);
            Assert.Equal(WaitKind.Signal, (await api.WaitForAsync(waiting, InstanceStatus.Waiting, Deadline)).Wait?.Kind);
            Assert.Equal(WaitKind.Task, (await api.WaitForAsync(task, InstanceStatus.Waiting, Deadline)).Wait?.Kind);
            await Eventually.WaitUntilAsync(async () => (await api.GetAsync(parked)).ParkedSignals == 1, Deadline, what: "the early signal is parked");
        }

        // This build upgrades it at start-up...
        await using var node = await TestServiceProcess.StartAsync("current", database.Settings);
        using var http = node.CreateClient();
        var current = new ApiClient(http);
        var schema = (await http.GetFromJsonAsync<SchemaStatus>("/admin/schema", WorkflowServiceFactory.Json))!;
        Assert.Equal(PreviousRelease.Schema, schema.OldestSupported);
        Assert.Equal(schema.NodeSchema, schema.Newest);
        Assert.True(schema.NodeSchema > PreviousRelease.Schema);
        Assert.Empty(schema.Pending);

        // ...and completes every instance the previous release left.
        await current.SignalAsync(waiting, "go", new { value = "after" });
        await current.SignalAsync(parked, "a", new { value = "late" });
        var open = (await http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={task}", WorkflowServiceFactory.Json))!.Items.Single();
        using (var complete = await http.PostAsJsonAsync($"/tasks/{open.Id}/complete", new { result = new { approved = true } }))
        {
            Assert.True(complete.IsSuccessStatusCode, $"completing the task: {(int)complete.StatusCode}");
        }

        Assert.Equal("after", (await current.WaitForAsync(waiting, InstanceStatus.Completed, Deadline)).Output?.GetProperty("result").GetString());
        var both = await current.WaitForAsync(parked, InstanceStatus.Completed, Deadline);
        Assert.Equal("early", both.Output?.GetProperty("b").GetProperty("value").GetString());
        await current.WaitForAsync(task, InstanceStatus.Completed, Deadline);
        await current.WaitForAsync(timed, InstanceStatus.Completed, Deadline);
        var before = await current.GetAsync(ended);
        Assert.Equal(InstanceStatus.Completed, before.Status);
        Assert.Contains(await current.HistoryAsync(ended), e => e.Type == "InstanceCompleted");

        // The instance that waited across the upgrade: the previous release wrote its start as one row per event, this
        // build its completion (several events) as one row (schema 7); its history reads them all, in order.
        var history = await current.HistoryAsync(waiting);
        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(e => e.Sequence));
        Assert.Equal("InstanceStarted", history[0].Type);
        Assert.Equal("InstanceCompleted", history[^1].Type);
        var received = Assert.Single(history, e => e.Type == "SignalReceived");
        Assert.Equal("go", received.Data?.GetProperty("signal").GetString());
        Assert.True(received.Sequence < history.Count - 1, "the completion's wait point wrote several events");
        var rows = await StoredHistoryRow.ReadAsync(database.Settings, waiting);
        Assert.Equal(Enumerable.Range(0, received.Sequence + 1), rows.Select(r => r.Sequence));
        Assert.All(rows.SkipLast(1), r => Assert.Null(r.MoreJson));
        Assert.NotNull(rows[^1].MoreJson);
    }

    /// <summary>The definitions the upgrade tests run, published under fresh names.</summary>
    private sealed class Names
    {
        public string Signal { get; } = Definitions.Unique("upgrade-signal");
        public string TwoWaits { get; } = Definitions.Unique("upgrade-parked");
        public string Timer { get; } = Definitions.Unique("upgrade-timer");
        public string Task { get; } = Definitions.Unique("upgrade-task");

        public async Task PublishAsync(ApiClient api)
        {
            await api.PublishAsync(Definitions.SignalRoundtrip(Signal));
            await api.PublishAsync(Definitions.TwoWaits(TwoWaits));
            await api.PublishAsync($$"""
                { "name": "{{Timer}}", "steps": [
                    { "id": "cool-off", "type": "delay", "duration": "PT20S" },
                    { "id": "done", "type": "complete", "result": "({ waited: true })" } ] }
                """);
            await api.PublishAsync($$"""
                { "name": "{{Task}}", "steps": [
                    { "id": "approve", "type": "humanTask", "title": "Approve", "output": "approval" },
                    { "id": "done", "type": "complete", "result": "({ approval: vars.approval })" } ] }
                """);
        }
    }

}

/// <summary>
/// A rolling deploy on the server database nodes share (SQLite is one node's file): nodes of the previous release and of
/// this build on one database during the migration.
/// </summary>
public sealed class PostgresRollingUpgradeTests : ServiceTest<PostgresBackend>
{
    protected override bool UsesDefaultService => false;

    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(90);

    /// <summary>
    /// A rolling deploy: a node of the previous release serves while a node of this build starts on the same database and
    /// migrates it; callers keep starting and signalling instances through both, and a previous-release node started
    /// after the migration still runs (the database supports its release).
    /// </summary>
    [Fact]
    public async Task Nodes_of_the_previous_and_this_release_share_the_database_during_the_migration_and_both_keep_serving()
    {
        var previous = await PreviousRelease.ServiceDllAsync();
        var database = await CreateDatabaseAsync();
        var settings = new Dictionary<string, string?>(database.Settings) { ["Workers:PollInterval"] = "00:00:00.500" };
        var old = Own(await TestServiceProcess.StartAsync("previous", settings, serviceDll: previous));
        using var oldClient = old.CreateClient();
        var oldApi = new ApiClient(oldClient);
        var name = Definitions.Unique("rolling");
        await oldApi.PublishAsync(Definitions.SignalRoundtrip(name));

        // Callers keep working through the old node while the new one starts and migrates.
        var startedDuringMigration = new ConcurrentBag<Guid>();
        using var stop = new CancellationTokenSource();
        var load = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                var instance = await oldApi.StartAsync(name);
                await oldApi.SignalAsync(instance.Id, "go", new { value = "old" });
                startedDuringMigration.Add(instance.Id);
            }
        }, TestContext.Current.CancellationToken);
        await Eventually.WaitUntilAsync(() => !startedDuringMigration.IsEmpty, Deadline, what: "the old node serves");
        ServiceProcess node;
        try
        {
            node = Own(await TestServiceProcess.StartAsync("current", settings));
        }
        finally
        {
            await stop.CancelAsync();
        }

        await load;
        using var newClient = node.CreateClient();
        var newApi = new ApiClient(newClient);
        var schema = (await newClient.GetFromJsonAsync<SchemaStatus>("/admin/schema", WorkflowServiceFactory.Json))!;
        Assert.Equal(PreviousRelease.Schema, schema.OldestSupported);
        Assert.Equal(schema.NodeSchema, schema.Newest);

        // Instances cross releases: started on one node, signalled through the other, completed by whichever claims them.
        var crossed = new List<Guid>();
        for (var i = 0; i < 10; i++)
        {
            var fromOld = await oldApi.StartAsync(name);
            await newApi.SignalAsync(fromOld.Id, "go", new { value = "new" });
            var fromNew = await newApi.StartAsync(name);
            await oldApi.SignalAsync(fromNew.Id, "go", new { value = "old" });
            crossed.AddRange([fromOld.Id, fromNew.Id]);
        }

        // A previous-release node started now (a restart in the middle of the deploy) still runs on the migrated database.
        await using var restarted = await TestServiceProcess.StartAsync("previous-again", settings, serviceDll: previous);
        using var restartedClient = restarted.CreateClient();
        var restartedApi = new ApiClient(restartedClient);
        var late = await restartedApi.StartAsync(name);
        await newApi.SignalAsync(late.Id, "go", new { value = "late" });
        crossed.Add(late.Id);

        foreach (var id in startedDuringMigration.Concat(crossed))
        {
            await newApi.WaitForAsync(id, InstanceStatus.Completed, Deadline);
            Assert.Equal(InstanceStatus.Completed, (await oldApi.GetAsync(id)).Status);
        }
    }
}

public sealed class SqliteUpgradeTests : UpgradeTests<SqliteBackend>;

public sealed class PostgresUpgradeTests : UpgradeTests<PostgresBackend>;
