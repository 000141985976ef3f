using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Testing;

/// <summary>
/// A TCP proxy on loopback that the fault runner owns, between nodes and their database. <see cref="Blackhole"/> stops
/// carrying bytes either way (connections stay open, nothing is refused: what was sent waits, as behind a partition or
/// in front of a paused server); <see cref="Heal"/> carries on with what waited, as TCP delivers once a partition heals.
/// New connections made meanwhile are accepted and then hear nothing until the heal. <see cref="Refuse"/> is a stopped
/// server as its clients see it: every connection it carries is closed, and each new one is closed as soon as it is
/// accepted, until the heal.
/// </summary>
internal sealed class FaultProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly string _targetHost;
    private readonly int _targetPort;
    private readonly CancellationTokenSource _closing = new();
    private readonly List<Task> _connections = [];
    private readonly Lock _lock = new();
    private TaskCompletionSource _open = Opened();

    /// <summary>Cancelled by <see cref="Refuse"/>: ends every connection carried until then.</summary>
    private CancellationTokenSource _carried = new();

    /// <summary>Every <see cref="_carried"/> replaced by a refusal, disposed with the proxy (a connection may still hold its token).</summary>
    private readonly List<CancellationTokenSource> _ended = [];
    private bool _refusing;
    private Task? _accepting;

    public FaultProxy(string targetHost, int targetPort)
    {
        _targetHost = targetHost;
        _targetPort = targetPort;
    }

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    public void Start()
    {
        _listener.Start();
        _accepting = AcceptAsync(_closing.Token);
    }

    /// <summary>From now on no byte is carried, either way, until <see cref="Heal"/>.</summary>
    public void Blackhole()
    {
        lock (_lock)
        {
            if (_open.Task.IsCompleted)
            {
                _open = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }
        }
    }

    /// <summary>From now on every connection is closed, those carried and those yet to come, until <see cref="Heal"/>.</summary>
    public void Refuse()
    {
        CancellationTokenSource ending;
        lock (_lock)
        {
            _refusing = true;
            ending = _carried;
            _ended.Add(ending);
            _carried = new CancellationTokenSource();
            // Connections waiting behind a blackhole go on to be closed too.
            _open.TrySetResult();
        }

        ending.Cancel();
    }

    public void Heal()
    {
        lock (_lock)
        {
            _refusing = false;
            _open.TrySetResult();
        }
    }

    public async ValueTask DisposeAsync()
    {
        Heal();
        await _closing.CancelAsync();
        _listener.Stop();
        _listener.Dispose();
        if (_accepting is not null)
        {
            await _accepting;
        }

        Task[] connections;
        lock (_lock)
        {
            connections = [.. _connections];
        }

        await Task.WhenAll(connections);
        _closing.Dispose();
        lock (_lock)
        {
            foreach (var ended in _ended)
            {
                ended.Dispose();
            }

            _carried.Dispose();
        }
    }

    private static TaskCompletionSource Opened()
    {
        var open = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        open.SetResult();
        return open;
    }

    private Task Gate
    {
        get
        {
            lock (_lock)
            {
                return _open.Task;
            }
        }
    }

    private async Task AcceptAsync(CancellationToken closing)
    {
        try
        {
            while (!closing.IsCancellationRequested)
            {
                var client = await _listener.AcceptTcpClientAsync(closing);
                lock (_lock)
                {
                    _connections.Add(CarryAsync(client, closing));
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // The proxy is closing.
        }
    }

    private async Task CarryAsync(TcpClient client, CancellationToken closing)
    {
        using (client)
        {
            try
            {
                await Gate.WaitAsync(closing);
                CancellationToken carried;
                lock (_lock)
                {
                    if (_refusing)
                    {
                        // Closed at once: the client sees its connection end, as against a server that is down.
                        return;
                    }

                    carried = _carried.Token;
                }

                using var server = new TcpClient();
                await server.ConnectAsync(_targetHost, _targetPort, closing);
                using var either = CancellationTokenSource.CreateLinkedTokenSource(closing, carried);
                var up = PumpAsync(client.GetStream(), server.GetStream(), either.Token);
                var down = PumpAsync(server.GetStream(), client.GetStream(), either.Token);
                await Task.WhenAny(up, down);
                // One side closed: close the other too.
                await either.CancelAsync();
                await Task.WhenAll(up, down);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or ObjectDisposedException)
            {
                // A side went away, or the proxy is closing.
            }
        }
    }

    private async Task PumpAsync(NetworkStream from, NetworkStream to, CancellationToken cancellationToken)
    {
        var buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                var read = await from.ReadAsync(buffer, cancellationToken);
                if (read == 0)
                {
                    return;
                }

                // Behind the blackhole the bytes wait here (and, once this buffer is held, in the kernel's) until the heal.
                await Gate.WaitAsync(cancellationToken);
                await to.WriteAsync(buffer.AsMemory(0, read), cancellationToken);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or ObjectDisposedException)
        {
            // Closed.
        }
    }
}
