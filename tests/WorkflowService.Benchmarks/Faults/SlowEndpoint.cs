using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// A local HTTP endpoint that answers every POST after <c>delay</c> (longer than the service's lease) and counts the
/// calls per workflow (the n of the body), so that a row can tell a call made once from one made again by a re-claim.
/// </summary>
internal sealed class SlowEndpoint : IAsyncDisposable
{
    private readonly HttpListener _listener = new();
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<int, int> _calls = new();
    private readonly Task _serving;

    public SlowEndpoint(TimeSpan delay)
    {
        _delay = delay;
        var port = FreePort();
        Url = new Uri($"http://127.0.0.1:{port}/slow");
        _listener.Prefixes.Add($"http://127.0.0.1:{port}/");
        _listener.Start();
        _serving = Task.Run(ServeAsync);
    }

    public Uri Url { get; }

    /// <summary>Calls received so far, by the workflow's n.</summary>
    public IReadOnlyDictionary<int, int> Calls => _calls;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        try
        {
            await _serving;
        }
        catch (Exception e) when (e is HttpListenerException or ObjectDisposedException or OperationCanceledException)
        {
        }

        _listener.Close();
        _stop.Dispose();
    }

    private async Task ServeAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            var context = await _listener.GetContextAsync();
            _ = Task.Run(() => AnswerAsync(context));
        }
    }

    private async Task AnswerAsync(HttpListenerContext context)
    {
        try
        {
            using var body = await JsonDocument.ParseAsync(context.Request.InputStream, cancellationToken: _stop.Token);
            var n = body.RootElement.GetProperty("n").GetInt32();
            _calls.AddOrUpdate(n, 1, static (_, c) => c + 1);
            await Task.Delay(_delay, _stop.Token);
            var answer = Encoding.UTF8.GetBytes($"{{\"n\":{n},\"answered\":true}}");
            context.Response.ContentType = "application/json";
            context.Response.ContentLength64 = answer.Length;
            await context.Response.OutputStream.WriteAsync(answer, _stop.Token);
            context.Response.Close();
        }
        catch (Exception e) when (e is OperationCanceledException or HttpListenerException or JsonException or KeyNotFoundException or IOException)
        {
            context.Response.Abort();
        }
    }

    private static int FreePort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }
}
