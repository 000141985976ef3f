using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Api;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Storage.Relational;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Events;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>
/// Retention on a real store: ended instances older than their period go with their history, signals, tasks and event
/// deliveries (archived first as JSON lines), delivered events' deliveries go after theirs, everything else stays; a dry run only counts; the hosted job does it by itself under a lease one
/// node holds at a time; the <c>purge</c> command does it from the command line.
/// </summary>
public abstract class RetentionTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private const string KeptLonger = "retention-kept-longer";

    private readonly string _archive = Path.Combine(Directory.CreateTempSubdirectory("workflow-archive-").FullName, "ended.jsonl");

    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    protected override Dictionary<string, string?> Settings => new()
    {
        ["Retention:EndedInstances"] = "1.00:00:00",
        [$"Retention:Definitions:{KeptLonger}"] = "30.00:00:00",
        // The job runs once at start-up, when nothing has ended yet: these tests purge through the API.
        ["Retention:Interval"] = "1.00:00:00",
        ["Retention:Export"] = _archive,
    };

    [Fact]
    public async Task A_purge_deletes_what_ended_longer_ago_than_its_period_with_everything_of_it_and_keeps_the_rest()
    {
        var tasks = Definitions.Unique("retention-task");
        var roundtrip = Definitions.Unique("retention-roundtrip");
        await Api.PublishAsync(TaskDefinition(tasks));
        await Api.PublishAsync(Definitions.SignalRoundtrip(roundtrip));
        await Api.PublishAsync(Definitions.SignalRoundtrip(KeptLonger));

        var old = new[] { await CompleteTaskInstanceAsync(tasks), await CompleteTaskInstanceAsync(tasks) };
        var cancelled = (await Api.StartAsync(roundtrip)).Id;
        using (var cancel = await Api.Http.PostAsJsonAsync($"/instances/{cancelled}/cancel", new { reason = "no longer needed" }))
        {
            Assert.True(cancel.IsSuccessStatusCode, $"cancel: {(int)cancel.StatusCode}");
        }

        var recent = await CompleteRoundtripAsync(roundtrip);
        var keptLonger = await CompleteRoundtripAsync(KeptLonger);
        var open = (await Api.StartAsync(roundtrip)).Id;
        await Api.WaitForAsync(open, InstanceStatus.Waiting);
        await Api.WaitForAsync(cancelled, InstanceStatus.Cancelled);
        var due = new[] { old[0], old[1], cancelled };
        await EndedAgoAsync([.. due, keptLonger], TimeSpan.FromDays(2));

        // A dry run counts per period and deletes nothing.
        var preview = (await Api.Http.GetFromJsonAsync<RetentionReport>("/admin/retention", WorkflowServiceFactory.Json))!;
        Assert.True(preview.DryRun);
        Assert.Equal(0, preview.Rows.Total);
        Assert.Equal(0, preview.Scopes.Single(s => s.Definition == KeptLonger).Instances);
        Assert.Equal(TimeSpan.FromDays(30), preview.Scopes.Single(s => s.Definition == KeptLonger).Period);
        Assert.Equal(due.Length, preview.Scopes.Single(s => s.Definition is null).Instances);
        Assert.Equal(InstanceStatus.Completed, (await Api.GetAsync(old[0])).Status);

        using var response = await Api.Http.PostAsync("/admin/retention/purge", null);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var report = (await response.Content.ReadFromJsonAsync<RetentionReport>(WorkflowServiceFactory.Json))!;
        Assert.False(report.DryRun);
        Assert.True(report.Complete);
        Assert.Equal(due.Length, report.Rows.Instances);
        Assert.Equal(old.Length, report.Rows.Tasks);
        // Rows, not events: at least a start and an end each (the relational stores write a row per wait point since
        // schema 7, MongoDB a document per event).
        Assert.True(report.Rows.History >= due.Length * 2, $"history rows deleted: {report.Rows.History}");
        Assert.True(report.Rows.Signals >= old.Length, $"signal rows deleted: {report.Rows.Signals}");

        foreach (var id in due)
        {
            using var gone = await Api.Http.GetAsync($"/instances/{id}");
            Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
        }

        Assert.Equal(InstanceStatus.Completed, (await Api.GetAsync(recent)).Status);
        Assert.Equal(InstanceStatus.Completed, (await Api.GetAsync(keptLonger)).Status);
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync(open)).Status);
        Assert.Equal((0, 0, 0), await RowsOfAsync(due));
        var (history, signals, _) = await RowsOfAsync([recent, keptLonger, open]);
        Assert.True(history > 0 && signals > 0);

        // Each deleted instance was archived first, with its history, signals and tasks.
        var archived = (await File.ReadAllLinesAsync(_archive)).Select(line => JsonDocument.Parse(line).RootElement).ToList();
        Assert.Equal(due.Order(), archived.Select(a => a.GetProperty("instance").GetProperty("id").GetGuid()).Order());
        Assert.All(archived, a => Assert.NotEqual(0, a.GetProperty("history").GetArrayLength()));
        // Event by event, in order, however the store keeps them.
        Assert.All(archived, a => Assert.Equal(Enumerable.Range(0, a.GetProperty("history").GetArrayLength()),
            a.GetProperty("history").EnumerateArray().Select(e => e.GetProperty("sequence").GetInt32())));
        Assert.Equal(old.Length, archived.Sum(a => a.GetProperty("tasks").GetArrayLength()));
    }

    [Fact]
    public async Task Event_deliveries_go_with_their_instance_and_delivered_ones_go_after_their_period_while_it_runs()
    {
        await using var receiver = await EventReceiver.StartAsync();
        var name = Definitions.Unique("retention-events");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        await receiver.SubscribeAsync(Api, $"/ok/{name}", name);

        var ended = await CompleteRoundtripAsync(name);
        var (aged, recent, deadLettered) = ((await Api.StartAsync(name)).Id, (await Api.StartAsync(name)).Id, (await Api.StartAsync(name)).Id);
        // Started and completed of the ended one, started of each running one.
        await Eventually.WaitUntilAsync(() => receiver.Of(name).Count >= 5, Deadline, what: "five events delivered");
        await Eventually.WaitUntilAsync(async () => await DeliveriesOfAsync([ended, aged, recent, deadLettered], DeliveryStatus.Delivered) == 5,
            Deadline, what: "five deliveries settled as delivered");
        await EndedAgoAsync([ended], TimeSpan.FromDays(2));
        await SetDeliveriesAsync(aged, DeliveryStatus.Delivered, DateTime.UtcNow - TimeSpan.FromDays(8));
        // As if every retry had failed a week ago: an operator may still replay it, so age does not purge it.
        await SetDeliveriesAsync(deadLettered, DeliveryStatus.DeadLettered, null);

        var preview = (await Api.Http.GetFromJsonAsync<RetentionReport>("/admin/retention", WorkflowServiceFactory.Json))!;
        Assert.Equal(TimeSpan.FromDays(7), preview.DeliveredEvents!.Period);
        Assert.Equal(1, preview.DeliveredEvents.Deliveries);
        Assert.Equal(1, preview.Scopes.Single(s => s.Definition is null).Instances);

        using var response = await Api.Http.PostAsync("/admin/retention/purge", null);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var report = (await response.Content.ReadFromJsonAsync<RetentionReport>(WorkflowServiceFactory.Json))!;
        Assert.Equal(1, report.DeliveredEvents!.Deliveries);
        Assert.Equal(3, report.Rows.Deliveries); // the ended instance's two and the aged one

        Assert.Equal(0, await DeliveriesOfAsync([ended, aged]));
        Assert.Equal(1, await DeliveriesOfAsync([recent], DeliveryStatus.Delivered));
        Assert.Equal(1, await DeliveriesOfAsync([deadLettered], DeliveryStatus.DeadLettered));
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync(aged)).Status);

        // The ended instance was archived with its deliveries.
        var archived = JsonDocument.Parse(Assert.Single(await File.ReadAllLinesAsync(_archive))).RootElement;
        Assert.Equal(ended, archived.GetProperty("instance").GetProperty("id").GetGuid());
        Assert.Equal($"{EventTypes.InstanceStarted} {EventTypes.InstanceCompleted}",
            string.Join(' ', archived.GetProperty("deliveries").EnumerateArray().Select(d => d.GetProperty("type").GetString())));
    }

    [Fact]
    public async Task The_hosted_job_purges_by_itself_in_bounded_batches()
    {
        var (factory, api) = await StartServiceAsync(new Dictionary<string, string?>
        {
            ["Retention:EndedInstances"] = "01:00:00",
            ["Retention:Interval"] = "00:00:00.200",
            ["Retention:BatchSize"] = "2",
        });
        var name = Definitions.Unique("retention-job");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var ended = new List<Guid>();
        for (var i = 0; i < 5; i++)
        {
            var instance = await api.StartAsync(name);
            await api.SignalAsync(instance.Id, "go");
            ended.Add((await api.WaitForAsync(instance.Id, InstanceStatus.Completed)).Id);
        }

        var kept = await api.StartAsync(name);
        await EndedAgoAsync(ended, TimeSpan.FromHours(2), factory.Services);

        await Eventually.WaitUntilAsync(async () =>
        {
            foreach (var id in ended)
            {
                using var response = await api.Http.GetAsync($"/instances/{id}");
                if (response.StatusCode != HttpStatusCode.NotFound)
                {
                    return false;
                }
            }

            return true;
        }, Deadline, what: "the job deleted every instance ended two hours ago, two at a time");
        Assert.Equal(InstanceStatus.Waiting, (await api.GetAsync(kept.Id)).Status);
    }

    [Fact]
    public async Task A_lease_is_held_by_one_node_until_it_runs_out_or_is_given_up()
    {
        var store = Factory.Get<IRetentionStore>();
        var ct = TestContext.Current.CancellationToken;

        Assert.True(await store.TryTakeLeaseAsync("test-job", "node-a", TimeSpan.FromMinutes(1), ct));
        Assert.False(await store.TryTakeLeaseAsync("test-job", "node-b", TimeSpan.FromMinutes(1), ct));
        Assert.True(await store.TryTakeLeaseAsync("test-job", "node-a", TimeSpan.FromMinutes(1), ct)); // renewed
        await store.ReleaseLeaseAsync("test-job", "node-b", ct); // not b's to give up
        Assert.False(await store.TryTakeLeaseAsync("test-job", "node-b", TimeSpan.FromMinutes(1), ct));
        await store.ReleaseLeaseAsync("test-job", "node-a", ct);
        Assert.True(await store.TryTakeLeaseAsync("test-job", "node-b", TimeSpan.FromMinutes(1), ct));

        // A holder that dies stops renewing: its lease runs out and another node takes over.
        Assert.True(await store.TryTakeLeaseAsync("short-job", "node-a", TimeSpan.FromMilliseconds(300), ct));
        Assert.False(await store.TryTakeLeaseAsync("short-job", "node-b", TimeSpan.FromMinutes(1), ct));
        await Eventually.WaitUntilAsync(() => store.TryTakeLeaseAsync("short-job", "node-b", TimeSpan.FromMinutes(1), ct), Deadline,
            what: "node-b takes the lease node-a let run out");
    }

    [Fact]
    public async Task A_purge_by_hand_waits_for_the_job_that_holds_the_lease()
    {
        var store = Factory.Get<IRetentionStore>();
        var ct = TestContext.Current.CancellationToken;
        // As soon as this node's own job has finished its first round (at start-up, with nothing due yet).
        await Eventually.WaitUntilAsync(() => store.TryTakeLeaseAsync(RetentionPurge.LeaseName, "another-node", TimeSpan.FromMinutes(1), ct),
            Deadline, what: "another node takes the retention lease");

        using (var busy = await Api.Http.PostAsync("/admin/retention/purge", null, ct))
        {
            var problem = await ApiClient.ProblemAsync(busy, HttpStatusCode.Conflict);
            Assert.Equal("A purge is running", (string?)problem["title"]);
        }

        await store.ReleaseLeaseAsync(RetentionPurge.LeaseName, "another-node", ct);
        using var done = await Api.Http.PostAsync("/admin/retention/purge", null, ct);
        Assert.Equal(HttpStatusCode.OK, done.StatusCode);
        // The purge gave the lease back: the job's next round can take it.
        Assert.True(await store.TryTakeLeaseAsync(RetentionPurge.LeaseName, "another-node", TimeSpan.FromMinutes(1), ct));
    }

    [Fact]
    public async Task The_purge_command_counts_with_a_dry_run_then_deletes()
    {
        var name = Definitions.Unique("retention-command");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var ended = await CompleteRoundtripAsync(name);
        await EndedAgoAsync([ended], TimeSpan.FromDays(3));
        var settings = new Dictionary<string, string?>(Factory.Settings) { ["Authentication:Mode"] = "None" };

        var dryRun = await TestServiceProcess.RunUntilExitAsync(settings, "purge", "--dry-run");
        Assert.True(dryRun.ExitCode == 0, dryRun.ToString());
        Assert.Contains("every other definition: kept 1.00:00:00", dryRun.Output, StringComparison.Ordinal);
        Assert.Contains(": 1 instances due", dryRun.Output, StringComparison.Ordinal);
        Assert.Equal(InstanceStatus.Completed, (await Api.GetAsync(ended)).Status);

        var purge = await TestServiceProcess.RunUntilExitAsync(settings, "purge");
        Assert.True(purge.ExitCode == 0, purge.ToString());
        Assert.Contains(": 1 instances deleted", purge.Output, StringComparison.Ordinal);
        using var gone = await Api.Http.GetAsync($"/instances/{ended}");
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }

    [Fact]
    public async Task Without_a_retention_period_nothing_is_purged_and_the_api_says_why()
    {
        // Delivered events are kept for 7 days unless the setting is emptied.
        var (_, api) = await StartServiceAsync(new Dictionary<string, string?> { ["Retention:DeliveredEvents"] = "" });

        using var response = await api.Http.PostAsync("/admin/retention/purge", null);

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.Conflict);
        Assert.Equal("Every ended instance and every delivered event is kept: set Retention:EndedInstances, Retention:Definitions:<name> "
            + "or Retention:DeliveredEvents to purge.", (string?)problem["detail"]);
    }

    private static string TaskDefinition(string name) => $$"""
        { "name": "{{name}}", "steps": [
            { "id": "approve", "type": "humanTask", "title": "Approve", "output": "approval" },
            { "id": "done", "type": "complete", "result": "({ approval: vars.approval })" } ] }
        """;

    private async Task<Guid> CompleteTaskInstanceAsync(string definition)
    {
        var instance = await Api.StartAsync(definition);
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);
        var task = (await Api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={instance.Id}", WorkflowServiceFactory.Json))!.Items.Single();
        using (var complete = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { result = new { ok = true } }))
        {
            Assert.True(complete.IsSuccessStatusCode, $"complete: {(int)complete.StatusCode}");
        }

        return (await Api.WaitForAsync(instance.Id, InstanceStatus.Completed)).Id;
    }

    private async Task<Guid> CompleteRoundtripAsync(string definition)
    {
        var instance = await Api.StartAsync(definition);
        await Api.SignalAsync(instance.Id, "go", new { value = 1 });
        return (await Api.WaitForAsync(instance.Id, InstanceStatus.Completed)).Id;
    }

    /// <summary>Moves the instances' end back in time, as if they had ended <paramref name="ago"/>.</summary>
    private async Task EndedAgoAsync(IReadOnlyCollection<Guid> ids, TimeSpan ago, IServiceProvider? services = null)
    {
        var list = ids.ToList();
        var at = DateTime.UtcNow - ago;
        if ((services ?? Factory.Services).GetService<MongoWorkflowStore>() is { } mongo)
        {
            var moved = await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.InstancesCollection)
                .UpdateManyAsync(MongoIds(list), Builders<BsonDocument>.Update.Set("completedAt", at));
            Assert.Equal(list.Count, moved.MatchedCount);
            return;
        }

        await using var db = await (services ?? Factory.Services).GetRequiredService<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync();
        Assert.Equal(list.Count, await db.Instances.Where(i => list.Contains(i.Id)).ExecuteUpdateAsync(u => u.SetProperty(i => i.CompletedAt, at)));
    }

    /// <summary>Sets the status and delivery time of every delivery of <paramref name="instanceId"/>.</summary>
    private async Task SetDeliveriesAsync(Guid instanceId, DeliveryStatus status, DateTime? deliveredAt)
    {
        if (Factory.Services.GetService<MongoWorkflowStore>() is { } mongo)
        {
            var moved = await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.DeliveriesCollection).UpdateManyAsync(
                Builders<BsonDocument>.Filter.Eq("instanceId", new BsonBinaryData(instanceId, GuidRepresentation.Standard)),
                Builders<BsonDocument>.Update.Set("status", status.ToString()).Set("deliveredAt", deliveredAt is { } at ? new BsonDateTime(at) : (BsonValue)BsonNull.Value));
            Assert.NotEqual(0, moved.MatchedCount);
            return;
        }

        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync();
        if (deliveredAt is { } delivered)
        {
            // A delivery delivered then was made before it: its event's time, and its version 7 id (what retention seeks by).
            var made = delivered - TimeSpan.FromMinutes(1);
            Assert.Equal(1, await db.Deliveries.Where(d => d.InstanceId == instanceId)
                .ExecuteUpdateAsync(u => u.SetProperty(d => d.Status, status).SetProperty(d => d.DeliveredAt, delivered)
                    .SetProperty(d => d.CreatedAt, made).SetProperty(d => d.Id, Guid.CreateVersion7(new DateTimeOffset(made, TimeSpan.Zero)))));
            return;
        }

        Assert.NotEqual(0, await db.Deliveries.Where(d => d.InstanceId == instanceId)
            .ExecuteUpdateAsync(u => u.SetProperty(d => d.Status, status).SetProperty(d => d.DeliveredAt, deliveredAt)));
    }

    /// <summary>The delivery rows left for <paramref name="ids"/> (of <paramref name="status"/> only, when given).</summary>
    private async Task<long> DeliveriesOfAsync(IReadOnlyCollection<Guid> ids, DeliveryStatus? status = null)
    {
        var list = ids.ToList();
        if (Factory.Services.GetService<MongoWorkflowStore>() is { } mongo)
        {
            var filter = Builders<BsonDocument>.Filter.In("instanceId", list.Select(id => new BsonBinaryData(id, GuidRepresentation.Standard)));
            if (status is { } wanted)
            {
                filter &= Builders<BsonDocument>.Filter.Eq("status", wanted.ToString());
            }

            return await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.DeliveriesCollection).CountDocumentsAsync(filter);
        }

        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync();
        return await db.Deliveries.LongCountAsync(d => list.Contains(d.InstanceId) && (status == null || d.Status == status));
    }

    /// <summary>The MongoDB store's documents of these ids (standard UUIDs, as the store writes them).</summary>
    private static FilterDefinition<BsonDocument> MongoIds(IEnumerable<Guid> ids) =>
        Builders<BsonDocument>.Filter.In("_id", ids.Select(id => new BsonBinaryData(id, GuidRepresentation.Standard)));

    /// <summary>The history, signal and task rows left for <paramref name="ids"/>.</summary>
    private async Task<(int History, int Signals, int Tasks)> RowsOfAsync(IReadOnlyCollection<Guid> ids)
    {
        var list = ids.ToList();
        if (Factory.Services.GetService<MongoWorkflowStore>() is { } mongo)
        {
            var byInstance = Builders<BsonDocument>.Filter.In("instanceId", list.Select(id => new BsonBinaryData(id, GuidRepresentation.Standard)));
            return (
                (int)await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.HistoryCollection).CountDocumentsAsync(byInstance),
                (int)await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.SignalsCollection).CountDocumentsAsync(byInstance),
                (int)await mongo.Database.GetCollection<BsonDocument>(MongoWorkflowStore.TasksCollection).CountDocumentsAsync(byInstance));
        }

        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync();
        return (
            await db.History.CountAsync(h => list.Contains(h.InstanceId)),
            await db.Signals.CountAsync(s => list.Contains(s.InstanceId)),
            await db.Tasks.CountAsync(t => list.Contains(t.InstanceId)));
    }
}

public sealed class SqliteRetentionTests : RetentionTests<SqliteBackend>;

public sealed class PostgresRetentionTests : RetentionTests<PostgresBackend>;

public sealed class MongoDbRetentionTests : RetentionTests<MongoDbBackend>;
