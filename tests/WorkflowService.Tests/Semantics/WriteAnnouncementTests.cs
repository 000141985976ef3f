using System.Collections.Concurrent;
using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Every write that queues a signal is announced once, after its commit, from what it wrote; a write that queued nothing
/// is not announced, and a wake-up that fails fails no write. Counted by a wake-up transport that records each
/// notification before handing it to the node's own.
/// </summary>
public abstract class WriteAnnouncementTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_queued_signal_is_announced_once_at_its_due_time_and_a_duplicate_or_refused_one_not_at_all()
    {
        var (wakeUp, api) = await StartAsync([]);
        var name = Definitions.Unique("announce");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);
        var before = wakeUp.Count;

        // Due in an hour: no worker takes it while the test counts.
        var due = DateTimeOffset.UtcNow.AddHours(1);
        await api.SignalAsync(instance.Id, "go", new { value = 1 }, dueAt: due, idempotencyKey: "once");
        await api.SignalAsync(instance.Id, "go", new { value = 1 }, dueAt: due, idempotencyKey: "once", expected: System.Net.HttpStatusCode.OK);
        using (var unknown = await api.Http.PostAsJsonAsync($"/instances/{Guid.NewGuid()}/signals", new { name = "go" }))
        {
            await ApiClient.ProblemAsync(unknown, System.Net.HttpStatusCode.NotFound);
        }

        Assert.Equal([due.ToUnixTimeMilliseconds()], wakeUp.Since(before));
    }

    [Fact]
    public async Task A_failing_signal_is_announced_once_per_retry_and_once_more_when_its_dead_letter_is_replayed()
    {
        var (wakeUp, api) = await StartAsync(new() { ["Engine:MaxAttempts"] = "2", ["Engine:RetryBackoff"] = "00:00:00.050" });
        var name = Definitions.Unique("announce-retry");
        await api.PublishAsync(Definitions.FaultsAfterGo(name));
        var instance = await api.StartAsync(name);
        var before = wakeUp.Count;

        var signal = await api.SignalAsync(instance.Id, "go");
        await api.WaitForAsync(instance.Id, InstanceStatus.Faulted);
        // Accepted, then given back once for its second attempt; the fault queues nothing.
        Assert.Equal(2, wakeUp.Since(before).Count);

        using (var replay = await api.Http.PostAsync($"/dead-letters/{signal.Id}/replay", null))
        {
            Assert.Equal(System.Net.HttpStatusCode.Accepted, replay.StatusCode);
        }

        using (var unknown = await api.Http.PostAsync($"/dead-letters/{Guid.NewGuid()}/replay", null))
        {
            await ApiClient.ProblemAsync(unknown, System.Net.HttpStatusCode.NotFound);
        }

        // The replay, then the replayed signal's own retry before it fails into the dead letters again.
        await Eventually.WaitUntilAsync(async () =>
            (await api.HistoryAsync(instance.Id)).Count(h => h.Type == "InstanceFaulted") == 2);
        Assert.Equal(4, wakeUp.Since(before).Count);
    }

    [Fact]
    public async Task A_completed_task_is_announced_once_and_a_repeated_completion_not_at_all()
    {
        var (wakeUp, api) = await StartAsync([]);
        var name = Definitions.Unique("announce-task");
        await api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "review", "type": "humanTask", "title": "Review", "output": "review" },
                { "id": "done", "type": "complete", "result": "vars.review" }
              ]
            }
            """);
        var instance = await api.StartAsync(name);
        var inbox = await api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={instance.Id}", WorkflowServiceFactory.Json);
        var task = Assert.Single(inbox!.Items);
        var before = wakeUp.Count;

        using (var complete = await api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "ana", result = new { approved = true } }))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, complete.StatusCode);
        }

        await api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        using (var again = await api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "ana" }))
        {
            await ApiClient.ProblemAsync(again, System.Net.HttpStatusCode.Conflict);
        }

        Assert.Single(wakeUp.Since(before));
    }

    [Fact]
    public async Task A_wake_up_that_fails_fails_no_write_and_the_poll_finds_the_signal()
    {
        var (wakeUp, api) = await StartAsync(new() { ["Workers:PollInterval"] = "00:00:00.100" }, failing: true);
        var name = Definitions.Unique("announce-down");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);

        await api.SignalAsync(instance.Id, "go", new { value = 7 });

        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(7, done.Output!.Value.GetProperty("result").GetInt32());
        Assert.NotEmpty(wakeUp.Since(0));
    }

    /// <summary>Starts a node whose signals all go to the workers (none applied on arrival), with a recording wake-up.</summary>
    private async Task<(RecordingWakeUp WakeUp, ApiClient Api)> StartAsync(Dictionary<string, string?> settings, bool failing = false)
    {
        var (factory, api) = await StartServiceAsync(new(settings) { ["Engine:ApplySignalsOnArrival"] = "false" }, services =>
        {
            services.AddSingleton<InProcessWakeUp>();
            services.AddSingleton(p => new RecordingWakeUp(p.GetRequiredService<InProcessWakeUp>(), failing));
            services.AddSingleton<IWakeUpTransport>(p => p.GetRequiredService<RecordingWakeUp>());
        });
        return (factory.Get<RecordingWakeUp>(), api);
    }

    /// <summary>The node's own in-process wake-up, each notification recorded first; a failing one throws instead of waking.</summary>
    private sealed class RecordingWakeUp(InProcessWakeUp inner, bool failing) : IWakeUpTransport
    {
        private readonly ConcurrentQueue<long> _notified = new();

        public int Count => _notified.Count;

        public bool IsHealthy => inner.IsHealthy;

        /// <summary>The due times notified after the first <paramref name="skip"/> notifications, in order.</summary>
        public List<long> Since(int skip) => [.. _notified.Skip(skip)];

        public void Notify(long dueAtMs)
        {
            _notified.Enqueue(dueAtMs);
            if (failing)
            {
                throw new InvalidOperationException("the wake-up transport is down");
            }

            inner.Notify(dueAtMs);
        }

        public Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken) => inner.WaitAsync(untilMs, cancellationToken);
    }
}

public sealed class SqliteWriteAnnouncementTests : WriteAnnouncementTests<SqliteBackend>;

public sealed class PostgresWriteAnnouncementTests : WriteAnnouncementTests<PostgresBackend>;
