using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>Timers and delayed signals, on a fake clock: no test waits for real time to pass.</summary>
public sealed class TimerTests : IAsyncLifetime
{
    private readonly FakeTimeProvider _clock = new(DateTimeOffset.UtcNow);
    private readonly WorkflowServiceFactory _factory;
    private ApiClient _api = null!;

    public TimerTests()
    {
        _factory = new WorkflowServiceFactory(
            new() { ["Workers:PollInterval"] = "00:00:01", ["Engine:RetryBackoff"] = "00:00:00" },
            services => services.AddSingleton<TimeProvider>(_clock));
    }

    public ValueTask InitializeAsync()
    {
        _api = new ApiClient(_factory.CreateClient());
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync() => _factory.DisposeAsync();

    [Fact]
    public async Task A_delay_fires_at_its_due_time_by_the_store_clock_and_not_before()
    {
        var name = Definitions.Unique("delay");
        await _api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "cool-off", "type": "delay", "duration": "PT1H" },
                { "id": "done", "type": "complete", "result": "'fired'" }
              ]
            }
            """);
        var instance = await _api.StartAsync(name);
        Assert.Equal(Engine.Persistence.WaitKind.Timer, instance.Wait!.Kind);

        await AdvanceAndLetTheWorkersLookAsync(TimeSpan.FromMinutes(59));
        Assert.Empty(await _factory.Store.ClaimDueSignalsAsync("probe", 10, TimeSpan.FromSeconds(1), TestContext.Current.CancellationToken));
        Assert.Equal(InstanceStatus.Waiting, (await _api.GetAsync(instance.Id)).Status);

        _clock.Advance(TimeSpan.FromMinutes(1));
        var done = await _api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("fired", done.Output!.Value.GetString());
        Assert.Contains(await _api.HistoryAsync(instance.Id), h => h.Type == "TimerFired");
    }

    [Fact]
    public async Task A_signal_wait_takes_its_timeout_path_when_the_timeout_comes_first()
    {
        var name = Definitions.Unique("timeout");
        await _api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "accepted", "timeout": "P14D", "onTimeout": "expired" },
                { "id": "done", "type": "complete", "result": "'accepted'" },
                { "id": "expired", "type": "complete", "result": "'expired'" }
              ]
            }
            """);
        var instance = await _api.StartAsync(name);

        _clock.Advance(TimeSpan.FromDays(14));
        var done = await _api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("expired", done.Output!.Value.GetString());
    }

    [Fact]
    public async Task A_delayed_signal_is_delivered_at_its_due_time_and_not_before()
    {
        var name = Definitions.Unique("delayed");
        await _api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await _api.StartAsync(name);

        var signal = await _api.SignalAsync(instance.Id, "go", new { value = 3 }, dueAt: _clock.GetUtcNow().AddMinutes(10));
        Assert.Equal(SignalStatus.Pending, signal.Status);
        await AdvanceAndLetTheWorkersLookAsync(TimeSpan.FromMinutes(9));
        Assert.Empty(await _factory.Store.ClaimDueSignalsAsync("probe", 10, TimeSpan.FromSeconds(1), TestContext.Current.CancellationToken));
        Assert.Equal(InstanceStatus.Waiting, (await _api.GetAsync(instance.Id)).Status);

        _clock.Advance(TimeSpan.FromMinutes(1));
        var done = await _api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(3, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task Expressions_read_the_service_clock()
    {
        var name = Definitions.Unique("clock");
        await _api.PublishAsync($$"""
            { "name": "{{name}}", "steps": [ { "id": "done", "type": "complete", "result": "Date.now()" } ] }
            """);

        var done = await _api.StartAsync(name);

        Assert.Equal(_clock.GetUtcNow().ToUnixTimeMilliseconds(), done.Output!.Value.GetInt64());
    }

    /// <summary>Moves the clock, then waits (bounded) until the dispatcher has polled on the new time twice.</summary>
    private async Task AdvanceAndLetTheWorkersLookAsync(TimeSpan by)
    {
        var metrics = _factory.Get<EngineMetrics>();
        _clock.Advance(by);
        for (var i = 0; i < 2; i++)
        {
            var polls = metrics.IdlePolls;
            var deadline = DateTime.UtcNow.AddSeconds(30);
            while (metrics.IdlePolls == polls)
            {
                Assert.True(DateTime.UtcNow < deadline, "the dispatcher did not poll");
                _clock.Advance(TimeSpan.FromMilliseconds(1));
                await Task.Yield();
            }
        }
    }
}
