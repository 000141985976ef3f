using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Regression (found by the fault runner's slow-handler row): an http call-out slower than the lease lost its claim while
/// it ran; another worker claimed the signal and called again, slowly too, and so on: the call was repeated and the
/// instance often never completed. The worker now extends the leases of the work it holds.
/// </summary>
public abstract class SlowCallOutTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Workers:LeaseDuration"] = "00:00:01" };

    [Fact]
    public async Task A_call_out_slower_than_the_lease_is_made_once_and_its_instance_completes_once()
    {
        await using var target = await CallOutTarget.StartAsync();
        var name = Definitions.Unique("slow-call");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "call", "type": "http", "method": "POST", "url": "'{{target.Address}}slow?ms=3500'", "body": "({})", "timeout": "PT20S", "retries": 0, "output": "reply" },
                { "id": "done", "type": "complete", "result": "vars.reply.body" }
              ]
            }
            """);

        var instances = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => Api.StartAsync(name)));
        foreach (var instance in instances)
        {
            var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
            Assert.True(done.Output!.Value.GetProperty("answered").GetBoolean());
            var history = await Api.HistoryAsync(instance.Id);
            Assert.Single(history, h => h.Type == "InstanceCompleted");
            Assert.DoesNotContain(history, h => h.Type == "StepFailed");
        }

        // Each call ran for three and a half leases: kept by one worker, never claimed and called again.
        Assert.Equal(3, target.SlowCalls);
    }
}

public sealed class SqliteSlowCallOutTests : SlowCallOutTests<SqliteBackend>;

public sealed class PostgresSlowCallOutTests : SlowCallOutTests<PostgresBackend>;

public sealed class MongoDbSlowCallOutTests : SlowCallOutTests<MongoDbBackend>;
