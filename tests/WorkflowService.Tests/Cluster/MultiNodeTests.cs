using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Json;
using System.Text;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Several service processes on one database: every instance completes exactly once even when a node is killed with
/// SIGKILL in the middle of the load, and the dead node's claims are taken over when their leases expire.
/// </summary>
public abstract class MultiNodeTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // The test runs service processes of its own on a database of its own.
    protected override bool UsesDefaultService => false;

    private const int Concurrency = 24;

    /// <summary>Instances the load starts and signals; the node is killed once 30 % of them have started.</summary>
    protected virtual int Instances => 2000;

    private int KillAfterStarts => Instances * 3 / 10;

    /// <summary>
    /// Another fault of the suite's own, injected when half the instances have started (and the node kill has happened):
    /// the second half starts once this returns; none by default.
    /// </summary>
    protected virtual Task InterruptAsync(ServiceProcess[] nodes, HttpClient[] clients) => Task.CompletedTask;

    /// <summary>What follows <see cref="InterruptAsync"/>, while the second half of the load runs; awaited after the load.</summary>
    protected virtual Task RecoverAsync(ServiceProcess[] nodes, HttpClient[] clients, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Changes the nodes' settings before they start; nothing by default.</summary>
    protected virtual Task PrepareAsync(Dictionary<string, string?> settings) => Task.CompletedTask;

    [Fact]
    public async Task Three_nodes_complete_every_instance_exactly_once_when_one_is_killed()
    {
        var database = await CreateDatabaseAsync();
        var settings = new Dictionary<string, string?>(database.Settings)
        {
            ["Workers:LeaseDuration"] = "00:00:03",
            ["Workers:PollInterval"] = "00:00:01",
            // The suite is about claims a killed node held: every signal goes to the workers, none is applied on arrival.
            ["Engine:ApplySignalsOnArrival"] = "false",
        };
        await PrepareAsync(settings);

        // All three start at once against an empty database: the schema is created once, safely.
        var nodes = await Task.WhenAll(Enumerable.Range(0, 3).Select(i => TestServiceProcess.StartAsync($"node-{i}", settings)));
        foreach (var node in nodes)
        {
            Own(node);
        }

        var clients = nodes.Select(n => n.CreateClient()).ToArray();
        var definition = await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "signal-roundtrip.json"));
        using (var publish = await clients[0].PostAsync("/definitions", new StringContent(definition, Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.Created, publish.StatusCode);
        }

        var ids = new Guid[Instances];
        var started = 0;
        var next = -1;
        var killer = KillWhileItHoldsClaimsAsync(nodes[2], clients[0], () => Volatile.Read(ref started) >= KillAfterStarts);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        var interruption = new Lazy<Task<Task>>(async () =>
        {
            await Eventually.WaitUntilAsync(() => nodes.Any(n => n.HasExited), TimeSpan.FromMinutes(2), what: "a node has been killed");
            await InterruptAsync(nodes, clients);
            return RecoverAsync(nodes, clients, stop.Token);
        });
        try
        {
            await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(async _ =>
            {
                int i;
                while ((i = Interlocked.Increment(ref next)) < Instances)
                {
                    if (i >= Instances / 2)
                    {
                        await interruption.Value;
                    }

                    var instance = await SendAsync<InstanceView>(nodes, clients, i, HttpMethod.Post, _ => "/instances",
                        new { definition = "signal-roundtrip", input = new { n = i } }, $"start-{i}");
                    ids[i] = instance.Id;
                    Interlocked.Increment(ref started);

                    await SendAsync<SignalView>(nodes, clients, i + 1, HttpMethod.Post, _ => $"/instances/{instance.Id}/signals",
                        new { name = "go", payload = new { value = i } }, $"go-{i}");
                }
            }));
            await await interruption.Value;
        }
        finally
        {
            // On a failing load too: nothing of the interruption outlives the test.
            await stop.CancelAsync();
            if (interruption.IsValueCreated && await Task.WhenAny(interruption.Value) is { IsCompletedSuccessfully: true } interrupted)
            {
                await Task.WhenAny(await interrupted);
            }
        }

        var orphaned = await killer;
        Assert.True(nodes[2].HasExited);
        Assert.NotEmpty(orphaned);

        // Every instance completes: wait on each with the service's long-poll, on the surviving nodes.
        var live = clients.Take(2).ToArray();
        var completed = new ConcurrentBag<InstanceView>();
        next = -1;
        await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < Instances)
            {
                completed.Add(await WaitForCompletionAsync(live[i % 2], ids[i]));
            }
        }));
        Assert.Equal(Instances, completed.Count(c => c.Status == InstanceStatus.Completed));
        Assert.Equal(Instances, completed.Select(c => c.Id).Distinct().Count());

        // Exactly once: one received signal and one completion in each history, one handled "go" per instance.
        var takenOver = 0;
        next = -1;
        await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < Instances)
            {
                var client = live[i % 2];
                var api = new ApiClient(client);
                var history = await api.HistoryAsync(ids[i]);
                Assert.Equal(1, history.Count(h => h.Type == "SignalReceived"));
                Assert.Equal(1, history.Count(h => h.Type == "InstanceCompleted"));
                var signals = await api.SignalsAsync(ids[i]);
                var go = Assert.Single(signals);
                Assert.Equal(SignalStatus.Handled, go.Status);
                if (go.Attempts >= 2)
                {
                    Assert.NotEqual("node-2", go.ClaimedBy);
                    Interlocked.Increment(ref takenOver);
                }
            }
        }));

        // The killed node held claims when it died; other nodes took them over once the leases expired. (A commit the
        // node had already sent when it was frozen may still land as its own: such a claim was not orphaned after all.)
        var orphansTakenOver = 0;
        foreach (var signal in orphaned)
        {
            var now = Assert.Single(await new ApiClient(live[0]).SignalsAsync(signal.InstanceId));
            Assert.Equal(SignalStatus.Handled, now.Status);
            if (now.ClaimedBy != "node-2")
            {
                Assert.True(now.Attempts >= 2);
                orphansTakenOver++;
            }
        }

        Assert.True(orphansTakenOver > 0, "no claim of the killed node was taken over");
        Assert.True(takenOver >= orphansTakenOver);
        var stuck = await live[0].GetFromJsonAsync<PageView<InstanceSummaryView>>("/instances?status=Waiting&limit=1", WorkflowServiceFactory.Json);
        Assert.Equal(0, stuck!.Total);
    }

    /// <summary>
    /// Once the load is under way, kills the node at a moment it holds claims and returns the claims it left behind.
    /// The node is frozen (SIGSTOP) while another node's API is asked what it holds, so the answer cannot go stale
    /// before the SIGKILL; a node that holds nothing at that moment is thawed and asked again a little later.
    /// </summary>
    private static async Task<IReadOnlyList<SignalView>> KillWhileItHoldsClaimsAsync(ServiceProcess node, HttpClient observer, Func<bool> loadIsRunning)
    {
        var deadline = DateTime.UtcNow.AddMinutes(2);
        while (true)
        {
            Assert.True(DateTime.UtcNow < deadline, "the node never held a claim under load");
            if (loadIsRunning())
            {
                node.Freeze();

                // A commit the node sent just before the freeze can still land while we ask (it did between a page's
                // count and its items once). Only claims seen pending in two reads, one after the other, count.
                var first = await HeldAsync(observer);
                var held = first.Count == 0 ? first : (await HeldAsync(observer)).Where(s => first.Any(f => f.Id == s.Id)).ToList();
                if (held.Count > 0)
                {
                    node.Kill();
                    return held;
                }

                node.Thaw();
            }

            // Poll again shortly: the condition is the node holding a claim, not an amount of time.
            await Task.Delay(TimeSpan.FromMilliseconds(5), TestContext.Current.CancellationToken);
        }
    }

    private static async Task<IReadOnlyList<SignalView>> HeldAsync(HttpClient observer) =>
        (await observer.GetFromJsonAsync<PageView<SignalView>>("/signals?status=Pending&claimedBy=node-2&limit=500", WorkflowServiceFactory.Json))!.Items;

    /// <summary>Sends to node <paramref name="preferred"/> % 3, failing over to a live node; the idempotency key makes a retry safe.</summary>
    private static async Task<T> SendAsync<T>(ServiceProcess[] nodes, HttpClient[] clients, int preferred, HttpMethod method,
        Func<int, string> path, object body, string idempotencyKey)
    {
        for (var attempt = 0; attempt < 6; attempt++)
        {
            var n = (preferred + attempt) % nodes.Length;
            if (nodes[n].HasExited)
            {
                continue;
            }

            try
            {
                using var request = new HttpRequestMessage(method, path(n)) { Content = JsonContent.Create(body) };
                request.Headers.Add("Idempotency-Key", idempotencyKey);
                using var response = await clients[n].SendAsync(request);
                if ((int)response.StatusCode >= 500)
                {
                    continue;
                }

                Assert.True(response.IsSuccessStatusCode, $"{method} {path(n)}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
                return (await response.Content.ReadFromJsonAsync<T>(WorkflowServiceFactory.Json))!;
            }
            catch (HttpRequestException)
            {
                // The node died under the request: try the next one with the same idempotency key.
            }
        }

        throw new InvalidOperationException($"no node accepted {method} {idempotencyKey}");
    }

    private static async Task<InstanceView> WaitForCompletionAsync(HttpClient client, Guid id)
    {
        var deadline = DateTime.UtcNow.AddMinutes(2);
        while (true)
        {
            var instance = (await client.GetFromJsonAsync<InstanceView>($"/instances/{id}?waitFor=Completed&timeout=10", WorkflowServiceFactory.Json))!;
            if (instance.Status == InstanceStatus.Completed || DateTime.UtcNow > deadline)
            {
                return instance;
            }
        }
    }
}

public sealed class PostgresMultiNodeTests : MultiNodeTests<PostgresBackend>;

public sealed class MongoDbMultiNodeTests : MultiNodeTests<MongoDbBackend>;

/// <summary>The same on PostgreSQL with Redis as the wake-up transport.</summary>
public sealed class RedisMultiNodeTests : MultiNodeTests<RedisWakeUpBackend>
{
    protected override int Instances => 1000;
}

/// <summary>
/// With Redis wake-ups, and the Redis server (one of the test's own) killed in the middle of the load until every live
/// node reports its wake-ups unhealthy (GET /metrics) and itself Degraded (GET /health/ready), then started again: the store and the poll carry the work meanwhile, every
/// instance still completes exactly once, and every node's transport comes back by itself.
/// </summary>
public sealed class RedisOutageMultiNodeTests : MultiNodeTests<RedisWakeUpBackend>
{
    private OwnedRedisServer? _redis;

    protected override int Instances => 1000;

    protected override async Task PrepareAsync(Dictionary<string, string?> settings)
    {
        if (OwnedRedisServer.Unavailable() is { } missing)
        {
            // A shared server (a container, WORKFLOW_TESTS_REDIS) cannot be killed for this test alone: where CI
            // requires redis, a machine without a redis-server of its own fails here instead of skipping.
            Backend.Unavailable($"killing Redis needs a redis-server this test owns: {missing}");
        }

        _redis = Own(await OwnedRedisServer.StartAsync(TestContext.Current.CancellationToken));
        settings["WakeUp:Redis:ConnectionString"] = _redis.ConnectionString;
    }

    protected override async Task InterruptAsync(ServiceProcess[] nodes, HttpClient[] clients)
    {
        await Eventually.WaitUntilAsync(() => AllAsync(nodes, clients, healthy: true), what: "both live nodes' wake-ups are healthy before Redis dies");
        _redis!.Kill();
    }

    protected override async Task RecoverAsync(ServiceProcess[] nodes, HttpClient[] clients, CancellationToken cancellationToken)
    {
        await Eventually.WaitUntilAsync(() => AllAsync(nodes, clients, healthy: false), what: "both live nodes notice Redis is gone");
        cancellationToken.ThrowIfCancellationRequested();
        await _redis!.RestartAsync(cancellationToken);
        await Eventually.WaitUntilAsync(() => AllAsync(nodes, clients, healthy: true), TimeSpan.FromMinutes(1), what: "both live nodes' wake-ups come back");
    }

    /// <summary>
    /// Whether both live nodes report their wake-ups <paramref name="healthy"/> (GET /metrics) and themselves Healthy or
    /// Degraded (GET /health/ready); an answer that is not 200 (a node busy past its readiness timeout) is "not yet".
    /// </summary>
    private static async Task<bool> AllAsync(ServiceProcess[] nodes, HttpClient[] clients, bool healthy)
    {
        var asked = 0;
        for (var i = 0; i < nodes.Length; i++)
        {
            if (nodes[i].HasExited)
            {
                continue;
            }

            try
            {
                var metrics = await clients[i].GetFromJsonAsync<NodeMetricsView>("/metrics", WorkflowServiceFactory.Json);
                // Readiness says the same to a load balancer: Degraded (still serving, by the poll) while wake-ups are down.
                using var response = await clients[i].GetAsync("/health/ready");
                var ready = System.Text.Json.Nodes.JsonNode.Parse(await response.Content.ReadAsStringAsync());
                if (!response.IsSuccessStatusCode || metrics!.WakeUpHealthy != healthy || (string?)ready?["status"] != (healthy ? "Healthy" : "Degraded"))
                {
                    return false;
                }
            }
            catch (HttpRequestException)
            {
                return false;
            }

            asked++;
        }

        return asked == 2;
    }
}
