using System.Net;
using System.Net.Http.Json;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// A signal applied where it arrives (issue 35): when its instance waits for it, the receiving node runs the instance to
/// its next wait point and commits once; anything else goes the queued way, with the queue's guarantees unchanged.
/// Most tests run with the signal workers off, so that only the request itself can have applied the signal.
/// </summary>
public abstract class SignalsOnArrivalTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private readonly CommitCounter _commits = new();

    protected override bool UsesDefaultService => false;

    private static Dictionary<string, string?> NoWorkers(params (string Key, string? Value)[] more)
    {
        var settings = new Dictionary<string, string?> { ["Workers:Enabled"] = "false", ["RateLimiting:Enabled"] = "false" };
        foreach (var (key, value) in more)
        {
            settings[key] = value;
        }

        return settings;
    }

    private static Dictionary<string, string?> WithWorkers() => new()
    {
        ["RateLimiting:Enabled"] = "false",
        ["Engine:RetryBackoff"] = "00:00:00.010",
        ["Engine:MaxAttempts"] = "3",
    };

    [Fact]
    public async Task A_signal_for_an_instance_waiting_for_it_is_applied_in_the_request_in_one_commit()
    {
        var (_, api) = await StartServiceAsync(NoWorkers(), services => services.AddSingleton<IInterceptor>(_commits));
        var name = Definitions.Unique("arrival");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);

        var before = _commits.Count;
        var signal = await api.SignalAsync(instance.Id, "go", new { value = 7 });
        var commits = _commits.Count - before;

        Assert.Equal(SignalStatus.Handled, signal.Status);
        Assert.Equal(1, signal.Attempts);
        Assert.NotNull(signal.HandledAt);
        Assert.Equal(1, commits);
        // No worker runs: the request completed the instance.
        var done = await api.GetAsync(instance.Id);
        Assert.Equal(InstanceStatus.Completed, done.Status);
        Assert.Equal(7, done.Output!.Value.GetProperty("result").GetInt32());
        var ledger = Assert.Single(await api.SignalsAsync(instance.Id));
        Assert.Equal((signal.Id, SignalStatus.Handled), (ledger.Id, ledger.Status));
        Assert.Contains(await api.HistoryAsync(instance.Id), h => h.Type == "SignalReceived");
    }

    [Fact]
    public async Task With_ApplySignalsOnArrival_off_the_signal_is_queued_for_a_worker()
    {
        var (_, api) = await StartServiceAsync(NoWorkers(("Engine:ApplySignalsOnArrival", "false")));
        var name = Definitions.Unique("queued");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);

        var signal = await api.SignalAsync(instance.Id, "go");

        Assert.Equal(SignalStatus.Pending, signal.Status);
        Assert.Equal(InstanceStatus.Waiting, (await api.GetAsync(instance.Id)).Status);
    }

    [Fact]
    public async Task A_signal_that_arrives_before_its_wait_is_queued_then_parked_as_before()
    {
        var (_, api) = await StartServiceAsync(WithWorkers());
        var name = Definitions.Unique("early");
        await api.PublishAsync(Definitions.TwoWaits(name));
        var instance = await api.StartAsync(name);

        // The instance waits for "a"; "b" comes first.
        var early = await api.SignalAsync(instance.Id, "b", new { n = 2 });
        Assert.Equal(SignalStatus.Pending, early.Status);
        await Eventually.WaitUntilAsync(async () => (await api.GetAsync(instance.Id)).ParkedSignals == 1, what: "b parked");
        await api.SignalAsync(instance.Id, "a", new { n = 1 });

        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(2, done.Output!.Value.GetProperty("b").GetProperty("n").GetInt32());
        Assert.Contains(await api.HistoryAsync(instance.Id), h => h.Type == "SignalParked");
    }

    [Fact]
    public async Task A_suspended_instance_takes_the_signal_into_the_queue_and_applies_it_when_resumed()
    {
        var (_, api) = await StartServiceAsync(WithWorkers());
        var name = Definitions.Unique("suspended");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);
        using (var suspend = await api.Http.PostAsJsonAsync($"/instances/{instance.Id}/suspend", new { reason = "hold" }))
        {
            Assert.Equal(HttpStatusCode.OK, suspend.StatusCode);
        }

        var signal = await api.SignalAsync(instance.Id, "go", new { value = 3 });

        Assert.Equal(SignalStatus.Pending, signal.Status);
        await Eventually.WaitUntilAsync(async () => (await api.GetAsync(instance.Id)).ParkedSignals == 1, what: "the signal kept");
        using (var resume = await api.Http.PostAsync($"/instances/{instance.Id}/resume", null))
        {
            Assert.Equal(HttpStatusCode.OK, resume.StatusCode);
        }

        Assert.Equal(InstanceStatus.Completed, (await api.WaitForAsync(instance.Id, InstanceStatus.Completed)).Status);
    }

    [Fact]
    public async Task A_run_that_fails_on_arrival_is_queued_retried_and_dead_lettered_as_before()
    {
        var (_, api) = await StartServiceAsync(WithWorkers());
        var name = Definitions.Unique("fails");
        await api.PublishAsync(Definitions.FaultsAfterGo(name));
        var instance = await api.StartAsync(name);

        var signal = await api.SignalAsync(instance.Id, "go", new { explode = true });

        Assert.Equal(SignalStatus.Pending, signal.Status);
        await api.WaitForAsync(instance.Id, InstanceStatus.Faulted);
        var deadLetters = await api.Http.GetFromJsonAsync<PageView<SignalView>>("/dead-letters?limit=500", WorkflowServiceFactory.Json);
        var dead = Assert.Single(deadLetters!.Items, d => d.Id == signal.Id);
        Assert.Equal(3, dead.Attempts);
    }

    [Fact]
    public async Task A_repeated_Idempotency_Key_answers_the_signal_applied_on_arrival_and_applies_nothing_twice()
    {
        var (_, api) = await StartServiceAsync(NoWorkers());
        var name = Definitions.Unique("idem");
        await api.PublishAsync(Definitions.TwoWaits(name));
        var instance = await api.StartAsync(name);

        var first = await api.SignalAsync(instance.Id, "a", new { n = 1 }, idempotencyKey: "order-1");
        var again = await api.SignalAsync(instance.Id, "a", new { n = 9 }, idempotencyKey: "order-1", expected: HttpStatusCode.OK);

        Assert.Equal(SignalStatus.Handled, first.Status);
        Assert.Equal(first.Id, again.Id);
        Assert.Single(await api.SignalsAsync(instance.Id));
        Assert.Single(await api.HistoryAsync(instance.Id), h => h.Type == "SignalReceived");
    }

    [Fact]
    public async Task A_signal_does_not_overtake_one_of_the_same_instance_queued_before_it()
    {
        var (_, api) = await StartServiceAsync(NoWorkers());
        var name = Definitions.Unique("order");
        await api.PublishAsync(Definitions.TwoWaits(name));
        var instance = await api.StartAsync(name);

        // "b" is not awaited yet: it is queued, due now, and no worker takes it.
        var queued = await api.SignalAsync(instance.Id, "b", new { n = 2 });
        var next = await api.SignalAsync(instance.Id, "a", new { n = 1 });

        Assert.Equal(SignalStatus.Pending, queued.Status);
        Assert.Equal(SignalStatus.Pending, next.Status);
        var waiting = await api.GetAsync(instance.Id);
        Assert.Equal((InstanceStatus.Waiting, 1), (waiting.Status, waiting.Revision));
    }

    [Fact]
    public async Task Signals_racing_each_other_and_the_workers_are_each_applied_exactly_once()
    {
        var (_, api) = await StartServiceAsync(WithWorkers());
        var name = Definitions.Unique("race");
        await api.PublishAsync(Definitions.TwoWaits(name));
        const int instances = 60;
        var ids = new Guid[instances];
        var handled = 0;

        await Task.WhenAll(Enumerable.Range(0, instances).Select(async i =>
        {
            ids[i] = (await api.StartAsync(name, new { i })).Id;
            // Two copies of "a" and one "b", all at once: one "a" may be applied on arrival while the other copy and "b"
            // are queued, claimed by workers and parked, or queued behind it. A copy that comes after the end is refused.
            var sent = await Task.WhenAll(SendAsync(api, ids[i], "a"), SendAsync(api, ids[i], "a"), SendAsync(api, ids[i], "b"));
            Interlocked.Add(ref handled, sent.Count(s => s?.Status == SignalStatus.Handled));
        }));

        foreach (var id in ids)
        {
            var done = await api.WaitForAsync(id, InstanceStatus.Completed, TimeSpan.FromMinutes(2));
            Assert.Equal(InstanceStatus.Completed, done.Status);
            var history = await api.HistoryAsync(id);
            Assert.Equal(2, history.Count(h => h.Type == "SignalReceived"));
            // A copy a worker claimed just before the end is closed by that worker, after the end.
            IReadOnlyList<SignalView> ledger = [];
            await Eventually.WaitUntilAsync(async () => (ledger = await api.SignalsAsync(id)).All(s => s.Status != SignalStatus.Pending),
                what: "every copy settled");
            Assert.Single(ledger, s => s.Name == "a" && s.Status == SignalStatus.Handled);
            Assert.Single(ledger, s => s.Name == "b" && s.Status == SignalStatus.Handled);
            // The other copy of "a", when it was taken, was never applied.
            Assert.All(ledger.Where(s => s.Name == "a" && s.Status != SignalStatus.Handled), s => Assert.Equal(SignalStatus.Unmatched, s.Status));
        }

        TestContext.Current.SendDiagnosticMessage($"{handled} of {instances * 3} signals were applied on arrival");
    }

    /// <summary>Sends a signal; null when the instance had already ended (409).</summary>
    private static async Task<SignalView?> SendAsync(ApiClient api, Guid id, string name)
    {
        using var response = await api.Http.PostAsJsonAsync($"/instances/{id}/signals", new { name, payload = new { name } }, WorkflowServiceFactory.Json);
        if (response.StatusCode == HttpStatusCode.Conflict)
        {
            return null;
        }

        Assert.Equal(HttpStatusCode.Accepted, response.StatusCode);
        return await response.Content.ReadFromJsonAsync<SignalView>(WorkflowServiceFactory.Json);
    }
}

public sealed class SqliteSignalsOnArrivalTests : SignalsOnArrivalTests<SqliteBackend>;

public sealed class PostgresSignalsOnArrivalTests : SignalsOnArrivalTests<PostgresBackend>;
