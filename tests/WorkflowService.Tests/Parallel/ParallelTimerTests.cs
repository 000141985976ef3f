using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Parallel;

/// <summary>Timers and timeouts inside parallel branches, on a fake clock: no test waits for real time to pass.</summary>
public abstract class ParallelTimerTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private readonly FakeTimeProvider _clock = new(DateTimeOffset.UtcNow);

    protected override Dictionary<string, string?> Settings => new() { ["Workers:PollInterval"] = "00:00:01", ["Engine:RetryBackoff"] = "00:00:00" };
    protected override void ConfigureServices(IServiceCollection services) => services.AddSingleton<TimeProvider>(_clock);

    [Fact]
    public async Task Each_branch_has_its_own_timer_and_the_step_joins_when_the_last_one_fires()
    {
        var name = Definitions.Unique("parallel-timers");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "cool-off", "steps": [ { "id": "cool-off", "type": "delay", "duration": "PT1H" } ] },
                  { "name": "police", "steps": [
                    { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "timeout": "PT2H", "onTimeout": "no-report", "next": "reported" },
                    { "id": "no-report", "type": "assign", "set": { "police": "'missing'" }, "next": "reported" },
                    { "id": "reported", "type": "assign", "set": { "checked": "true" } } ] } ] },
                { "id": "done", "type": "complete", "result": "({ police: vars.police, checked: vars.checked })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        Assert.Equal([WaitKind.Timer, WaitKind.Signal], instance.Wait!.Branches!.Select(b => b.Kind!.Value));
        Assert.All(instance.Wait.Branches!, b => Assert.NotNull(b.TimerId));

        _clock.Advance(TimeSpan.FromHours(1));
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "cool-off").Joined);
        var halfway = await Api.GetAsync(instance.Id);
        Assert.Equal(InstanceStatus.Waiting, halfway.Status);
        Assert.False(halfway.Wait!.Branches!.Single(b => b.Name == "police").Joined);

        _clock.Advance(TimeSpan.FromHours(1));
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("missing", done.Output!.Value.GetProperty("police").GetString());
        var history = await Api.HistoryAsync(instance.Id);
        Assert.Contains(history, h => h.Type == "TimerFired" && h.StepId == "cool-off");
        Assert.Contains(history, h => h.Type == "TimedOut" && h.StepId == "wait-police");
    }

    [Fact]
    public async Task A_branch_signal_that_comes_first_cancels_only_its_own_timeout()
    {
        var name = Definitions.Unique("parallel-timeout");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "wait-a", "type": "waitForSignal", "signal": "a", "timeout": "PT1H", "onTimeout": "late-a", "next": "ok-a" },
                                            { "id": "late-a", "type": "assign", "set": { "a": "'late'" }, "next": "ok-a" },
                                            { "id": "ok-a", "type": "assign", "set": { "aDone": "true" } } ] },
                  { "name": "b", "steps": [ { "id": "wait-b", "type": "waitForSignal", "signal": "b", "timeout": "PT1H", "onTimeout": "late-b", "next": "ok-b" },
                                            { "id": "late-b", "type": "assign", "set": { "b": "'late'" }, "next": "ok-b" },
                                            { "id": "ok-b", "type": "assign", "set": { "bDone": "true" } } ] } ] },
                { "id": "done", "type": "complete", "result": "({ a: vars.a ?? 'on time', b: vars.b ?? 'on time' })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        var timerA = instance.Wait!.Branches!.Single(b => b.Name == "a").TimerId;

        await Api.SignalAsync(instance.Id, "a");
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "a").Joined);
        Assert.Equal(SignalStatus.Cancelled, Assert.Single(await Api.SignalsAsync(instance.Id), s => s.Id == timerA).Status);
        _clock.Advance(TimeSpan.FromHours(1));
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("on time", done.Output!.Value.GetProperty("a").GetString());
        Assert.Equal("late", done.Output!.Value.GetProperty("b").GetString());
    }
}

public sealed class SqliteParallelTimerTests : ParallelTimerTests<SqliteBackend>;

public sealed class PostgresParallelTimerTests : ParallelTimerTests<PostgresBackend>;

public sealed class MongoDbParallelTimerTests : ParallelTimerTests<MongoDbBackend>;
