using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Issue #36: a run has a budget as a whole (<c>Engine:MaxRunTime</c>), not only per expression. A loop of cheap steps
/// that stays within <c>Engine:MaxStepsPerRun</c> is stopped by its time, inside <c>POST /instances</c> and on every retry,
/// and the instance faults with the reason. The budget here (1 ms) is far less than 10,000 steps can take on any
/// machine; the loop's expressions are cheap, so nothing else stops it first.
/// </summary>
public abstract class RunBudgetTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new()
    {
        ["Engine:MaxStepsPerRun"] = "20000",
        ["Engine:MaxRunTime"] = "00:00:00.001",
        ["Engine:RetryBackoff"] = "00:00:00.010",
        ["Engine:MaxAttempts"] = "2",
    };

    [Fact]
    public async Task A_loop_of_ten_thousand_cheap_steps_within_MaxStepsPerRun_is_stopped_by_its_time_budget()
    {
        var name = Definitions.Unique("budget");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "count", "type": "assign", "set": { "n": "(vars.n ?? 0) + 1" } },
                { "id": "again", "type": "decision", "branches": [ { "when": "vars.n < 5000", "next": "count" } ], "otherwise": "done" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);
        Assert.Equal(InstanceStatus.Running, instance.Status);
        var faulted = await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        Assert.Contains("the run took more than 1 ms without reaching a wait point (Engine:MaxRunTime)", faulted.Error, StringComparison.Ordinal);
        Assert.DoesNotContain(await Api.HistoryAsync(instance.Id), e => e.Type == HistoryEventTypes.InstanceCompleted);
    }
}

public sealed class SqliteRunBudgetTests : RunBudgetTests<SqliteBackend>;

public sealed class PostgresRunBudgetTests : RunBudgetTests<PostgresBackend>;
