using System.Net;
using System.Net.Sockets;
using System.Text;
using WorkflowService.Testing;

namespace WorkflowService.UnitTests.Faults;

/// <summary>
/// The fault runner's TCP proxy in front of an echo server on loopback. A refusal is a stopped server as its clients see
/// it (the MongoDB database-outage row has no server of its own to stop): every connection carried is closed, and each
/// new one as soon as it is accepted, until the heal; a blackhole holds the bytes until the heal delivers them.
/// </summary>
public sealed class FaultProxyTests : IAsyncDisposable
{
    /// <summary>Every wait on the proxy is bounded: loopback answers in microseconds, so this is never what a pass waits for.</summary>
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);

    private readonly TcpListener _echo = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _echoing;

    public FaultProxyTests()
    {
        _echo.Start();
        _echoing = EchoAsync(_stop.Token);
    }

    [Fact]
    public async Task A_refusal_closes_the_carried_connections_and_every_new_one_until_the_heal()
    {
        await using var proxy = StartProxy();
        using var carried = await ConnectAsync(proxy.Port);
        Assert.Equal("a", await RoundtripAsync(carried, "a"));

        proxy.Refuse();

        Assert.True(await EndsAsync(carried), "the connection carried at the refusal stayed open");
        using (var refused = await ConnectAsync(proxy.Port))
        {
            Assert.True(await EndsAsync(refused), "a connection made during the refusal stayed open");
        }

        proxy.Heal();
        using var healed = await ConnectAsync(proxy.Port);
        Assert.Equal("b", await RoundtripAsync(healed, "b"));
    }

    [Fact]
    public async Task A_blackhole_holds_the_bytes_until_the_heal_delivers_them()
    {
        await using var proxy = StartProxy();
        using var client = await ConnectAsync(proxy.Port);
        Assert.Equal("a", await RoundtripAsync(client, "a"));

        proxy.Blackhole();
        var stream = client.GetStream();
        await stream.WriteAsync("b"u8.ToArray(), TestContext.Current.CancellationToken);
        var buffer = new byte[1];
        var read = stream.ReadAsync(buffer, TestContext.Current.CancellationToken).AsTask();
        // Nothing has come back through a proxy that carries nothing (looked at once: the test never sleeps to see it).
        Assert.False(read.IsCompleted);

        proxy.Heal();

        Assert.Equal(1, await read.WaitAsync(Bound, TestContext.Current.CancellationToken));
        Assert.Equal((byte)'b', buffer[0]);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _echo.Stop();
        _echo.Dispose();
        await _echoing;
        _stop.Dispose();
    }

    private FaultProxy StartProxy()
    {
        var proxy = new FaultProxy("127.0.0.1", ((IPEndPoint)_echo.LocalEndpoint).Port);
        proxy.Start();
        return proxy;
    }

    private static async Task<TcpClient> ConnectAsync(int port)
    {
        var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, port, TestContext.Current.CancellationToken);
        return client;
    }

    private static async Task<string> RoundtripAsync(TcpClient client, string text)
    {
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(text), TestContext.Current.CancellationToken);
        var buffer = new byte[text.Length];
        await stream.ReadExactlyAsync(buffer).AsTask().WaitAsync(Bound, TestContext.Current.CancellationToken);
        return Encoding.ASCII.GetString(buffer);
    }

    /// <summary>Whether the connection ends (end of stream, or reset) within the bound.</summary>
    private static async Task<bool> EndsAsync(TcpClient client)
    {
        try
        {
            return await client.GetStream().ReadAsync(new byte[1], TestContext.Current.CancellationToken).AsTask()
                .WaitAsync(Bound, TestContext.Current.CancellationToken) == 0;
        }
        catch (IOException)
        {
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    /// <summary>The server behind the proxy: writes back whatever each connection sends.</summary>
    private async Task EchoAsync(CancellationToken stop)
    {
        var connections = new List<Task>();
        try
        {
            while (true)
            {
                var client = await _echo.AcceptTcpClientAsync(stop);
                connections.Add(Task.Run(async () =>
                {
                    using (client)
                    {
                        try
                        {
                            await client.GetStream().CopyToAsync(client.GetStream(), stop);
                        }
                        catch (Exception e) when (e is IOException or OperationCanceledException)
                        {
                            // The proxy closed its side, or the test is over.
                        }
                    }
                }, stop));
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // The test is over.
        }

        await Task.WhenAll(connections.Select(c => c.ContinueWith(_ => { }, TaskScheduler.Default)));
    }
}
