using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// A forEach whose node is killed with SIGKILL while its items are being applied: a node started on the same store
/// resumes it, and every item starts once and ends once.
/// </summary>
public abstract class ForEachNodeKillTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override bool UsesDefaultService => false;

    private const int Items = 20;

    [Fact]
    public async Task A_node_killed_mid_way_through_a_forEach_leaves_it_to_the_next_node_with_no_item_run_twice()
    {
        var database = await CreateDatabaseAsync();
        var settings = new Dictionary<string, string?>(database.Settings)
        {
            ["Workers:Enabled"] = "true",
            ["Workers:LeaseDuration"] = "00:00:03",
            ["Workers:PollInterval"] = "00:00:00.500",
        };
        var name = Definitions.Unique("foreach-kill");
        var first = Own(await TestServiceProcess.StartAsync("node-a", settings));
        Guid id;
        using (var firstClient = first.CreateClient())
        {
            var api = new ApiClient(firstClient);
            await api.PublishAsync($$"""
                { "name": "{{name}}", "steps": [
                  { "id": "each", "type": "forEach", "items": "input.items", "maxConcurrency": 3, "output": "results",
                    "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "go" } ], "result": "signal.n" },
                  { "id": "end", "type": "complete", "result": "vars.results" } ] }
                """);
            id = (await api.StartAsync(name, new { items = Enumerable.Range(0, Items).ToArray() })).Id;

            // The first half is sent, and the node dies as soon as the last of it is answered: some are applied, some queued.
            for (var i = 0; i < Items / 2; i++)
            {
                await api.SignalAsync(id, $"go#{i}", new { n = i });
            }

            first.Kill();
        }

        var second = Own(await TestServiceProcess.StartAsync("node-b", settings));
        using var secondClient = second.CreateClient();
        var secondApi = new ApiClient(secondClient);
        for (var i = Items / 2; i < Items; i++)
        {
            await secondApi.SignalAsync(id, $"go#{i}", new { n = i });
        }

        var done = await secondApi.WaitForAsync(id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        Assert.Equal(Enumerable.Range(0, Items), done.Output!.Value.EnumerateArray().Select(e => e.GetInt32()));
        var history = await secondApi.HistoryAsync(id);
        int[] Count(string type) => [.. Enumerable.Range(0, Items).Select(i => history.Count(h => h.Type == type && h.Data!.Value.GetProperty("index").GetInt32() == i))];
        Assert.All(Count(HistoryEventTypes.ItemStarted), c => Assert.Equal(1, c));
        Assert.All(Count(HistoryEventTypes.ItemEnded), c => Assert.Equal(1, c));
        Assert.All(await secondApi.SignalsAsync(id), s => Assert.Equal(SignalStatus.Handled, s.Status));
    }
}

public sealed class SqliteForEachNodeKillTests : ForEachNodeKillTests<SqliteBackend>;

public sealed class PostgresForEachNodeKillTests : ForEachNodeKillTests<PostgresBackend>;
