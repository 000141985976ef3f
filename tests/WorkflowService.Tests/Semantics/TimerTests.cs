using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>Timers and delayed signals, on a fake clock: no test waits for real time to pass.</summary>
public abstract class TimerTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private readonly FakeTimeProvider _clock = new(DateTimeOffset.UtcNow);

    protected override Dictionary<string, string?> Settings => new() { ["Workers:PollInterval"] = "00:00:01", ["Engine:RetryBackoff"] = "00:00:00" };
    protected override void ConfigureServices(IServiceCollection services) => services.AddSingleton<TimeProvider>(_clock);

    [Fact]
    public async Task A_delay_fires_at_its_due_time_by_the_store_clock_and_not_before()
    {
        var name = Definitions.Unique("delay");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "cool-off", "type": "delay", "duration": "PT1H" },
                { "id": "done", "type": "complete", "result": "'fired'" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        Assert.Equal(Engine.Persistence.WaitKind.Timer, instance.Wait!.Kind);

        await AdvanceAndLetTheWorkersLookAsync(TimeSpan.FromMinutes(59));
        Assert.Empty(await Factory.Get<ISignalQueue>().ClaimDueSignalsAsync("probe", 10, TimeSpan.FromSeconds(1), TestContext.Current.CancellationToken));
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync(instance.Id)).Status);

        _clock.Advance(TimeSpan.FromMinutes(1));
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("fired", done.Output!.Value.GetString());
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "TimerFired");
    }

    [Fact]
    public async Task A_signal_wait_takes_its_timeout_path_when_the_timeout_comes_first()
    {
        var name = Definitions.Unique("timeout");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "accepted", "timeout": "P14D", "onTimeout": "expired" },
                { "id": "done", "type": "complete", "result": "'accepted'" },
                { "id": "expired", "type": "complete", "result": "'expired'" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);

        _clock.Advance(TimeSpan.FromDays(14));
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("expired", done.Output!.Value.GetString());
    }

    [Fact]
    public async Task A_delayed_signal_is_delivered_at_its_due_time_and_not_before()
    {
        var name = Definitions.Unique("delayed");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);

        var signal = await Api.SignalAsync(instance.Id, "go", new { value = 3 }, dueAt: _clock.GetUtcNow().AddMinutes(10));
        Assert.Equal(SignalStatus.Pending, signal.Status);
        await AdvanceAndLetTheWorkersLookAsync(TimeSpan.FromMinutes(9));
        Assert.Empty(await Factory.Get<ISignalQueue>().ClaimDueSignalsAsync("probe", 10, TimeSpan.FromSeconds(1), TestContext.Current.CancellationToken));
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync(instance.Id)).Status);

        _clock.Advance(TimeSpan.FromMinutes(1));
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(3, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task Expressions_read_the_service_clock()
    {
        var name = Definitions.Unique("clock");
        await Api.PublishAsync($$"""
            { "name": "{{name}}", "steps": [ { "id": "done", "type": "complete", "result": "Date.now()" } ] }
            """);

        var done = await Api.StartAsync(name);

        Assert.Equal(_clock.GetUtcNow().ToUnixTimeMilliseconds(), done.Output!.Value.GetInt64());
    }

    /// <summary>
    /// Moves the clock, then waits until the dispatcher has polled on the new time twice (the first poll counted may
    /// have read the clock before it moved; the second cannot have).
    /// </summary>
    /// <remarks>
    /// The dispatcher sleeps until its next poll on the fake clock, a poll interval (1 s) ahead, so it is woken the way a
    /// committed signal wakes it, through its wake-up transport, and the clock stays where the test put it. (Nudging the
    /// clock 1 ms a check instead took a thousand checks, ten seconds at best, for every poll: a loaded machine ran
    /// out of the deadline.)
    /// </remarks>
    private async Task AdvanceAndLetTheWorkersLookAsync(TimeSpan by)
    {
        var metrics = Factory.Get<EngineMetrics>();
        var wakeUp = Factory.Get<IWakeUpTransport>();
        _clock.Advance(by);
        for (var i = 0; i < 2; i++)
        {
            var polls = metrics.IdlePolls;
            await Eventually.WaitUntilAsync(() =>
            {
                // Due at once: wakes a sleeping dispatcher, and makes a working one look again before it sleeps.
                wakeUp.Notify(0);
                return metrics.IdlePolls != polls;
            }, what: "a dispatcher poll");
        }
    }
}

public sealed class SqliteTimerTests : TimerTests<SqliteBackend>;

public sealed class PostgresTimerTests : TimerTests<PostgresBackend>;

public sealed class MongoDbTimerTests : TimerTests<MongoDbBackend>;
