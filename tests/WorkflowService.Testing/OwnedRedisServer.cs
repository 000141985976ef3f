using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Testing;

/// <summary>
/// A Redis server the tests or the runner own: Debian's redis-server on a loopback port of its own, no persistence,
/// so that killing and restarting "the broker" disturbs no one else. Restarted on the same port.
/// </summary>
internal sealed class OwnedRedisServer : IAsyncDisposable
{
    public const string Binary = "/usr/bin/redis-server";
    private static readonly TimeSpan StartDeadline = TimeSpan.FromSeconds(30);

    private Process? _process;

    private OwnedRedisServer(int port) => Port = port;

    public int Port { get; }

    /// <summary>A StackExchange.Redis configuration string for it.</summary>
    public string ConnectionString => string.Create(CultureInfo.InvariantCulture, $"127.0.0.1:{Port}");

    /// <summary>Why no server can be owned here, or null when one can.</summary>
    public static string? Unavailable() => File.Exists(Binary) ? null : $"no {Binary} (apt-get install redis-server)";

    public static async Task<OwnedRedisServer> StartAsync(CancellationToken cancellationToken)
    {
        var server = new OwnedRedisServer(LoopbackPort.Free());
        await server.RestartAsync(cancellationToken);
        return server;
    }

    /// <summary>Kills the server at once (SIGKILL: no goodbye to its clients).</summary>
    public void Kill()
    {
        if (_process is { HasExited: false } process)
        {
            process.Kill();
            process.WaitForExit(StartDeadline);
        }
    }

    /// <summary>Starts it (again, after <see cref="Kill"/>) on the same port and waits until it accepts connections.</summary>
    public async Task RestartAsync(CancellationToken cancellationToken)
    {
        Kill();
        _process?.Dispose();
        var start = new ProcessStartInfo(Binary)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in new[] { "--port", Port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no" })
        {
            start.ArgumentList.Add(argument);
        }

        _process = Process.Start(start) ?? throw new InvalidOperationException($"{Binary} did not start");
        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            if (await PingsAsync(cancellationToken))
            {
                return;
            }

            if (_process.HasExited || deadline.Elapsed > StartDeadline)
            {
                throw new InvalidOperationException($"redis-server on port {Port} did not accept connections within {StartDeadline.TotalSeconds:0} s");
            }

            await Task.Delay(50, cancellationToken);
        }
    }

    private async Task<bool> PingsAsync(CancellationToken cancellationToken)
    {
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, Port, cancellationToken);
            var stream = client.GetStream();
            await stream.WriteAsync("PING\r\n"u8.ToArray(), cancellationToken);
            var buffer = new byte[16];
            var read = await stream.ReadAsync(buffer, cancellationToken);
            return read >= 5 && buffer.AsSpan(0, 5).SequenceEqual("+PONG"u8);
        }
        catch (SocketException)
        {
            return false;
        }
        catch (IOException)
        {
            return false;
        }
    }

    public ValueTask DisposeAsync()
    {
        Kill();
        _process?.Dispose();
        return ValueTask.CompletedTask;
    }
}
