using System.Net;
using System.Net.Http.Json;
using System.Text.Json.Nodes;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>Moving waiting instances between versions: a dry run says where each wait lands; a stranding plan is refused.</summary>
public abstract class MigrationTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static string Version1(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "wait-approval", "type": "waitForSignal", "signal": "approve", "output": "approval" },
            { "id": "notify", "type": "assign", "set": { "notified": "true" } },
            { "id": "wait-payment", "type": "waitForSignal", "signal": "paid" },
            { "id": "done", "type": "complete", "result": "'v1'" }
          ]
        }
        """;

    // Version 2 renames "wait-approval" to "await-approval" and removes "notify" and "wait-payment".
    private static string Version2(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "await-approval", "type": "waitForSignal", "signal": "approve", "output": "approval" },
            { "id": "done", "type": "complete", "result": "({ version: 2, approved: vars.approval.ok })" }
          ]
        }
        """;

    [Fact]
    public async Task Instances_waiting_on_version_1_move_to_version_2_by_an_approved_plan_and_complete_there()
    {
        var name = Definitions.Unique("migrate");
        await Api.PublishAsync(Version1(name));
        var first = await Api.StartAsync(name);
        var second = await Api.StartAsync(name);
        await Api.PublishAsync(Version2(name));
        var plan = new { definition = name, fromVersion = 1, toVersion = 2, stepMap = new Dictionary<string, string> { ["wait-approval"] = "await-approval" } };

        using var dry = await Api.Http.PostAsJsonAsync("/instances/migrate", new { plan.definition, plan.fromVersion, plan.toVersion, plan.stepMap, dryRun = true });
        var preview = (await dry.Content.ReadFromJsonAsync<MigrationReport>(WorkflowServiceFactory.Json))!;
        Assert.Equal(HttpStatusCode.OK, dry.StatusCode);
        Assert.Equal(2, preview.Instances.Count);
        Assert.All(preview.Instances, i => Assert.Equal(("wait-approval", "await-approval", true), (i.FromStep, i.ToStep, i.Allowed)));
        Assert.Equal(1, (await Api.GetAsync(first.Id)).Version);

        using var run = await Api.Http.PostAsJsonAsync("/instances/migrate", new { plan.definition, plan.fromVersion, plan.toVersion, plan.stepMap, dryRun = false });
        var report = (await run.Content.ReadFromJsonAsync<MigrationReport>(WorkflowServiceFactory.Json))!;
        Assert.Equal(2, report.Migrated);

        foreach (var id in new[] { first.Id, second.Id })
        {
            var moved = await Api.GetAsync(id);
            Assert.Equal((2, "await-approval"), (moved.Version, moved.Wait!.StepId));
            await Api.SignalAsync(id, "approve", new { ok = true });
            var done = await Api.WaitForAsync(id, InstanceStatus.Completed);
            Assert.Equal(2, done.Output!.Value.GetProperty("version").GetInt32());
            Assert.Contains(await Api.HistoryAsync(id), h => h.Type == "InstanceMigrated");
        }
    }

    [Fact]
    public async Task A_plan_that_would_strand_an_instance_is_refused_naming_it_and_moves_nothing()
    {
        var name = Definitions.Unique("strand");
        await Api.PublishAsync(Version1(name));
        var atApproval = await Api.StartAsync(name);
        var atPayment = await Api.StartAsync(name);
        await Api.SignalAsync(atPayment.Id, "approve", new { ok = true });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(atPayment.Id)).Wait?.StepId == "wait-payment");
        await Api.PublishAsync(Version2(name));

        using var response = await Api.Http.PostAsJsonAsync("/instances/migrate", new
        {
            definition = name,
            toVersion = 2,
            stepMap = new Dictionary<string, string> { ["wait-approval"] = "await-approval" },
            dryRun = false,
        });

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        Assert.Contains(atPayment.Id.ToString(), (string)problem["detail"]!, StringComparison.Ordinal);
        var stranded = Assert.Single(problem["instances"]!.AsArray(), i => !(bool)i!["allowed"]!);
        Assert.Equal(atPayment.Id.ToString(), (string)stranded!["instanceId"]!);
        Assert.Equal(1, (await Api.GetAsync(atApproval.Id)).Version);
        Assert.Equal(1, (await Api.GetAsync(atPayment.Id)).Version);
    }

    [Fact]
    public async Task Migrating_to_a_version_that_does_not_exist_is_not_found()
    {
        var name = Definitions.Unique("nover");
        await Api.PublishAsync(Version1(name));
        var instance = await Api.StartAsync(name);

        using var response = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/migrate", new { toVersion = 9, dryRun = true });

        await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
    }
}

public sealed class SqliteMigrationTests : MigrationTests<SqliteBackend>;

public sealed class PostgresMigrationTests : MigrationTests<PostgresBackend>;

public sealed class MongoDbMigrationTests : MigrationTests<MongoDbBackend>;
