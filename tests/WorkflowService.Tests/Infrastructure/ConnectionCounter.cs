using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// A TCP listener on every local address, IPv4 and IPv6, that counts the connections it accepts and closes them: a test
/// of a call that must not be made asserts the count stays at zero.
/// </summary>
public sealed class ConnectionCounter : IAsyncDisposable
{
    private readonly TcpListener _listener;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _accepting;
    private int _accepted;

    public ConnectionCounter()
    {
        _listener = new TcpListener(IPAddress.IPv6Any, 0);
        _listener.Server.DualMode = true;
        _listener.Start();
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _accepting = AcceptAsync();
    }

    public int Port { get; }

    /// <summary>The connections accepted so far.</summary>
    public int Accepted => Volatile.Read(ref _accepted);

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                using var client = await _listener.AcceptTcpClientAsync(_stop.Token);
                Interlocked.Increment(ref _accepted);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Dispose();
        await _accepting;
        _stop.Dispose();
    }
}
