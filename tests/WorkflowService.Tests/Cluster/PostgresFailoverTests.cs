using System.Net;
using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Two nodes on a pg_auto_failover cluster (synchronous secondary) through the death of the primary's machine, given only
/// the multi-host connection string: nothing told them which server to use after it. The cluster, the nodes and the kill
/// are the class's (<see cref="NodesThroughAFailover"/>); each test asserts one thing they show afterwards.
/// </summary>
public sealed class PostgresFailoverTests(PostgresFailoverTests.NodesThroughAFailover nodes) : IClassFixture<PostgresFailoverTests.NodesThroughAFailover>
{
    [Fact]
    public async Task Signals_acknowledged_before_the_primary_died_are_on_the_new_primary()
    {
        var api = nodes.Ready();
        foreach (var id in nodes.CompletedBefore)
        {
            var instance = await api.GetAsync(id);
            Assert.Equal(InstanceStatus.Completed, instance.Status);
        }

        foreach (var id in nodes.AcknowledgedBefore)
        {
            Assert.Contains(await api.SignalsAsync(id), s => s.Name == "go");
        }
    }

    [Fact]
    public async Task Requests_during_the_failover_are_told_to_retry_and_succeed_once_it_is_over()
    {
        var api = nodes.Ready();
        // Until the new primary takes writes a start is refused with 503 and Retry-After, never with an error of its own;
        // once it does (a little before the monitor reports it), starts are created again.
        Assert.Contains(nodes.AnsweredDuringFailover, answer => answer.Status == HttpStatusCode.ServiceUnavailable);
        Assert.All(nodes.AnsweredDuringFailover, answer =>
        {
            Assert.True(answer.Status is HttpStatusCode.Created or HttpStatusCode.ServiceUnavailable, $"answered {answer.Status}");
            Assert.True(answer.Status == HttpStatusCode.Created || answer.RetryAfter, "503 carries Retry-After");
        });

        var instance = await StartWithRetryAsync(api, nodes.Definition);
        await api.SignalAsync(instance.Id, "go", new { value = 7 });
        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal(7, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task The_workers_listener_reconnects_to_the_new_primary_and_wakes_them_before_their_poll()
    {
        var api = nodes.Ready();
        var listener = nodes.WorkerWakeUps;
        // Open again, and heard by the front node (which withholds hints while it believes no other node listens).
        await Eventually.WaitUntilAsync(() => listener.IsHealthy && listener.Subscriptions > nodes.SubscriptionsBefore && nodes.FrontWakeUps.PeersListening,
            TimeSpan.FromSeconds(90), "the worker's listener is open again and heard");
        var heard = listener.NotificationsReceived;

        // The worker polls every ten minutes: only a NOTIFY on the new primary can wake it within the deadline.
        var instance = await StartWithRetryAsync(api, nodes.Definition);
        await api.SignalAsync(instance.Id, "go", new { value = 9 });
        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        Assert.Equal(9, done.Output!.Value.GetProperty("result").GetInt32());
        Assert.True(listener.NotificationsReceived > heard, "the worker heard a wake-up after the failover");
    }

    private static async Task<InstanceView> StartWithRetryAsync(ApiClient api, string definition)
    {
        InstanceView? started = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            var response = await api.Http.PostAsJsonAsync("/instances", new { definition }, WorkflowServiceFactory.Json);
            started = response.StatusCode == HttpStatusCode.Created ? await response.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json) : null;
            return started is not null;
        }, TimeSpan.FromSeconds(60), "a start is accepted on the new primary");
        return started!;
    }

    /// <summary>
    /// The cluster (short monitor timeouts: the failover takes seconds), a worker node that polls every ten minutes and an
    /// API-only front node, work done and work acknowledged, then the primary's machine killed and a new primary promoted.
    /// </summary>
    public sealed class NodesThroughAFailover() : AutoFailoverClusterFixture(new AutoFailoverOptions
    {
        NodeUnhealthyAfter = TimeSpan.FromSeconds(5),
        PrimaryDemoteTimeout = TimeSpan.FromSeconds(5),
    })
    {
        private const int Each = 5;
        private readonly List<Guid> _completedBefore = [];
        private readonly List<Guid> _acknowledgedBefore = [];
        private WorkflowServiceFactory? _worker;
        private WorkflowServiceFactory? _front;
        private ApiClient? _api;

        public string Definition { get; } = Definitions.Unique("failover");

        /// <summary>Instances run to completion before the kill.</summary>
        public IReadOnlyList<Guid> CompletedBefore => _completedBefore;

        /// <summary>Instances whose signal was acknowledged (202) just before the kill, not waited for.</summary>
        public IReadOnlyList<Guid> AcknowledgedBefore => _acknowledgedBefore;

        /// <summary>How many times the worker's listener had opened before the kill.</summary>
        public long SubscriptionsBefore { get; private set; }

        /// <summary>What starts sent from the kill until the monitor reported the promotion were answered.</summary>
        public IReadOnlyList<(HttpStatusCode Status, bool RetryAfter)> AnsweredDuringFailover => _answeredDuringFailover;

        private readonly List<(HttpStatusCode Status, bool RetryAfter)> _answeredDuringFailover = [];

        public BroadcastWakeUp WorkerWakeUps => Assert.IsType<BroadcastWakeUp>(_worker!.Services.GetRequiredService<IWakeUpTransport>());

        public BroadcastWakeUp FrontWakeUps => Assert.IsType<BroadcastWakeUp>(_front!.Services.GetRequiredService<IWakeUpTransport>());

        /// <summary>The front node's client; skips (or fails, where required) when the machine cannot own a cluster.</summary>
        public ApiClient Ready()
        {
            SkipUnlessOwned();
            return _api!;
        }

        private protected override async Task StartedAsync(OwnedAutoFailoverCluster cluster, CancellationToken ct)
        {
            var store = new Dictionary<string, string?>
            {
                ["Store:Provider"] = "PostgreSql",
                ["Store:ConnectionString"] = cluster.MultiHostConnectionString,
            };
            _worker = new WorkflowServiceFactory(new(store) { ["Workers:NodeId"] = "worker", ["Workers:PollInterval"] = "00:10:00" });
            _front = new WorkflowServiceFactory(new(store)
            {
                ["Workers:NodeId"] = "front", ["Workers:Enabled"] = "false", ["Engine:ApplySignalsOnArrival"] = "false",
            });
            _api = new ApiClient(_front.CreateClient());
            await _api.PublishAsync(Definitions.SignalRoundtrip(Definition));
            var (worker, front) = (WorkerWakeUps, FrontWakeUps);
            await Eventually.WaitUntilAsync(() => worker.IsHealthy && front.IsHealthy && worker.PeersListening && front.PeersListening,
                TimeSpan.FromSeconds(60), "both nodes listen and hear each other");

            for (var i = 0; i < Each; i++)
            {
                var instance = await _api.StartAsync(Definition);
                await _api.SignalAsync(instance.Id, "go", new { value = i });
                await _api.WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
                _completedBefore.Add(instance.Id);
            }

            for (var i = 0; i < Each; i++)
            {
                var instance = await _api.StartAsync(Definition);
                await _api.SignalAsync(instance.Id, "go", new { value = i });
                _acknowledgedBefore.Add(instance.Id);
            }

            SubscriptionsBefore = worker.Subscriptions;
            var killed = await cluster.KillPrimaryPostmasterAsync(ct);
            var promotion = cluster.WaitForPrimaryChangeAsync(killed, TimeSpan.FromSeconds(120), ct);
            // Clients keep calling through the failover: each call selects a host again, and finds none until the promotion.
            while (!promotion.IsCompleted)
            {
                using var answer = await _api.Http.PostAsJsonAsync("/instances", new { definition = Definition }, WorkflowServiceFactory.Json, ct);
                if (!promotion.IsCompleted)
                {
                    _answeredDuringFailover.Add((answer.StatusCode, answer.Headers.RetryAfter is not null));
                }
            }

            await promotion;
            // Reads answer 503 until the front node's pool finds the new primary (Npgsql looks again at a host it last saw
            // as a standby after Host Recheck Seconds): the tests read what is there once the failover is over.
            var first = _completedBefore[0];
            await Eventually.WaitUntilAsync(async () =>
            {
                using var read = await _api.Http.GetAsync($"/instances/{first}", ct);
                // Meanwhile a read is told to retry, as a request during the failover is: never an error of its own.
                Assert.True(read.IsSuccessStatusCode || (read.StatusCode == HttpStatusCode.ServiceUnavailable && read.Headers.RetryAfter is not null),
                    $"a read after the promotion answered {read.StatusCode}");
                return read.IsSuccessStatusCode;
            }, TimeSpan.FromSeconds(60), "the front node reads from the new primary");
        }

        protected override async ValueTask StopAsync()
        {
            if (_front is not null)
            {
                await _front.DisposeAsync();
            }

            if (_worker is not null)
            {
                await _worker.DisposeAsync();
            }
        }
    }
}
