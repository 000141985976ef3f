using System.Collections.Concurrent;
using Npgsql;
using Rebus.Activation;
using Rebus.Backoff;
using Rebus.Bus;
using Rebus.Config;
using Rebus.Logging;
using Rebus.Routing.TypeBased;
using WorkflowService.Testing.RebusPeer;
using WorkflowService.LoadRunner.Hosting;
using WorkflowService.LoadRunner.Scenarios;

namespace WorkflowService.LoadRunner.Peers;

/// <summary>
/// The Rebus peer as the peer-rebus scenarios drive it: the saga in its own process (<see cref="PeerProcess"/>) and the
/// load client's Rebus endpoint in this runner, with an input queue of its own for the saga's replies, both on the
/// PostgreSQL transport of the run's database. One operation sends the start and awaits the saga's reply that it is
/// stored, sends "go", and awaits the completion reply, each reply bounded by <see cref="ReplyTimeout"/>.
/// </summary>
internal sealed class RebusPeerSession : IAsyncDisposable
{
    /// <summary>The longest wait for one reply: a reply that does not come is the operation's failure, never a hang.</summary>
    public static readonly TimeSpan ReplyTimeout = TimeSpan.FromSeconds(60);

    public const string TransportTable = "rebus_messages";
    public const string SagaQueue = "rebus-roundtrip-saga";
    public const string ClientQueue = "rebus-bench-client";
    public const string SagaTable = "rebus_saga_data";
    public const string SagaIndexTable = "rebus_saga_index";

    /// <summary>
    /// The most connections one endpoint's pool opens. Rebus holds two per message in flight (the transport's receive
    /// transaction, and the saga storage's own), so a pool is 2 × parallelism + 2 up to this; the server's 100 connections are
    /// shared with other databases on this machine (Npgsql's default pool of 100 per endpoint exhausted them at parallelism 16).
    /// </summary>
    public const int MaxPoolSize = 40;

    /// <summary>The pool an endpoint of <paramref name="parallelism"/> needs: a receive and a saga storage connection per message in flight.</summary>
    public static int PoolSize(int parallelism) => Math.Min(MaxPoolSize, (2 * parallelism) + 2);

    /// <summary>Where Rebus moves a message whose handling failed five times (its default error queue).</summary>
    public const string ErrorQueue = "error";

    private readonly ConcurrentDictionary<Guid, TaskCompletionSource> _started = new();
    private readonly ConcurrentDictionary<Guid, TaskCompletionSource<int>> _completed = new();
    private readonly PeerProcess _peer;
    private BuiltinHandlerActivator? _client;

    private RebusPeerSession(PeerProcess peer) => _peer = peer;

    public int PeerPid => _peer.Pid;
    public string PeerReadyText => _peer.ReadyText;
    public string PeerLogPath => _peer.LogPath;

    public static async Task<RebusPeerSession> StartAsync(
        string peerDll, string connectionString, RebusPeerSettings settings, string workDirectory, CancellationToken cancellationToken)
    {
        var peerConnection = new NpgsqlConnectionStringBuilder(connectionString) { MaxPoolSize = PoolSize(settings.Parallelism) }.ConnectionString;
        var peer = await PeerProcess.StartAsync(peerDll,
            [
                "--connection", peerConnection, "--transport-table", TransportTable, "--queue", SagaQueue,
                "--saga-table", SagaTable, "--saga-index-table", SagaIndexTable, .. settings.PeerArguments,
            ],
            PeerSettings.ReadyLine, workDirectory, cancellationToken);
        var session = new RebusPeerSession(peer);
        try
        {
            session.StartClient(new NpgsqlConnectionStringBuilder(connectionString) { MaxPoolSize = PoolSize(settings.ClientParallelism) }.ConnectionString, settings);
        }
        catch
        {
            await session.DisposeAsync();
            throw;
        }

        return session;
    }

    private void StartClient(string connectionString, RebusPeerSettings settings)
    {
        var client = new BuiltinHandlerActivator();
        _client = client;
        client.Handle<RoundtripStarted>(reply =>
        {
            if (_started.TryRemove(reply.Id, out var waiting))
            {
                waiting.TrySetResult();
            }

            return Task.CompletedTask;
        });
        client.Handle<RoundtripCompleted>(reply =>
        {
            if (_completed.TryRemove(reply.Id, out var waiting))
            {
                waiting.TrySetResult(reply.Result);
            }

            return Task.CompletedTask;
        });
        Configure.With(client)
            .Logging(l => l.Console(LogLevel.Warn))
            .Transport(t => t.UsePostgreSql(connectionString, TransportTable, ClientQueue))
            .Routing(r => r.TypeBased().Map<StartRoundtrip>(SagaQueue).Map<Go>(SagaQueue))
            .Options(o =>
            {
                o.SetNumberOfWorkers(settings.ClientWorkers);
                o.SetMaxParallelism(settings.ClientParallelism);
                if (settings.ClientBackoff.Count > 0)
                {
                    o.SetBackoffTimes(settings.ClientBackoff);
                }
            })
            .Start();
    }

    /// <summary>
    /// One signal-roundtrip operation, timed as ours: start = start sent → the saga's reply that it is stored and waiting;
    /// signalPublish = "go" sent (its row committed to the transport's table); signalToCompletion = "go" sent → the
    /// completion reply received.
    /// </summary>
    public async Task<OperationSample> RoundtripAsync(int index, CancellationToken cancellationToken)
    {
        var bus = (_client ?? throw new InvalidOperationException("the client endpoint is stopped")).Bus;
        var id = Guid.CreateVersion7();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var completed = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        _started[id] = started;
        _completed[id] = completed;
        var clock = new PhaseClock();
        try
        {
            await bus.Send(new StartRoundtrip(id, index));
            await AwaitReplyAsync(started.Task, nameof(RoundtripStarted), cancellationToken);
            clock.Lap(Phases.Start);
            await bus.Send(new Go(id, index));
            clock.Lap(Phases.SignalPublish);
            await AwaitReplyAsync(completed.Task, nameof(RoundtripCompleted), cancellationToken);
            clock.Lap(Phases.SignalToCompletion);
            var result = await completed.Task;
            return clock.Finish(result == index ? null : $"unexpected result {result} for {index}");
        }
        finally
        {
            _started.TryRemove(id, out _);
            _completed.TryRemove(id, out _);
        }
    }

    private static async Task AwaitReplyAsync(Task reply, string name, CancellationToken cancellationToken)
    {
        try
        {
            await reply.WaitAsync(ReplyTimeout, cancellationToken);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"no {name} reply within {ReplyTimeout.TotalSeconds:0} s");
        }
    }

    /// <summary>Stops the load client's endpoint (its receives poll the database too): the peer alone stays.</summary>
    public void StopClient()
    {
        _client?.Dispose();
        _client = null;
    }

    /// <summary>Stops the client's endpoint, then the peer; returns the peer's exit code.</summary>
    public async Task<int> StopAsync()
    {
        StopClient();
        return await _peer.StopAsync();
    }

    public async ValueTask DisposeAsync()
    {
        StopClient();
        await _peer.DisposeAsync();
    }
}
