using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// A node whose own clock is wrong by minutes: every due time comes from the store's clock (the database's), so the
/// node's work is due when it should be. Regression: a child's end once woke its parent by the node's own clock, so a
/// node running ahead held the parent back by its skew.
/// </summary>
/// <remarks>
/// PostgreSQL only: the embedded SQLite store has no clock of its own, so there the store's clock is the node's and no
/// two clocks can disagree.
/// </remarks>
public sealed class PostgresClockSkewTests : ServiceTest<PostgresBackend>
{
    private static readonly TimeSpan Skew = TimeSpan.FromMinutes(10);

    protected override void ConfigureServices(IServiceCollection services) => services.AddSingleton<TimeProvider>(new SkewedClock(Skew));

    [Fact]
    public async Task A_node_whose_clock_runs_minutes_ahead_resumes_a_parent_as_soon_as_its_child_ends()
    {
        var child = Definitions.Unique("skew-child");
        var parent = Definitions.Unique("skew-parent");
        await Api.PublishAsync($$"""
            { "name": "{{child}}", "steps": [ { "id": "done", "type": "complete", "result": "'child done'" } ] }
            """);
        await Api.PublishAsync($$"""
            {
              "name": "{{parent}}",
              "steps": [
                { "id": "delegate", "type": "subWorkflow", "definition": "{{child}}", "output": "child" },
                { "id": "done", "type": "complete", "result": "vars.child.output" }
              ]
            }
            """);

        var started = await Api.StartAsync(parent);

        // The deadline is far below the skew: a parent resumed by the node's clock would still be waiting.
        var done = await Api.WaitForAsync(started.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal("child done", done.Output!.Value.GetString());
        var storeNow = DateTimeOffset.FromUnixTimeMilliseconds(Factory.Get<IStoreClock>().NowMs());
        Assert.True(Factory.Get<TimeProvider>().GetUtcNow() - storeNow > Skew - TimeSpan.FromMinutes(1),
            "the node's clock was not ahead of the store's: the test did not skew anything");
    }

    /// <summary>The system clock, <paramref name="skew"/> ahead; timestamps (durations) are not skewed.</summary>
    private sealed class SkewedClock(TimeSpan skew) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => System.GetUtcNow() + skew;
    }
}
