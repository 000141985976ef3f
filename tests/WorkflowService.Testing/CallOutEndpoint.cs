using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;

namespace WorkflowService.Testing;

/// <summary>
/// A local HTTP endpoint in the runner's process that workflows' http call-outs go to: it answers every POST of a body
/// <c>{ "n": … }</c> with <c>{ "n": …, "answered": true }</c>, after <c>delay</c> (zero: at once), and counts the calls
/// per n, so that a fault row can tell a call made once from one made again by a re-claim. Its CPU is the runner's.
/// </summary>
internal sealed class CallOutEndpoint : IAsyncDisposable
{
    private readonly HttpListener _listener = new();
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<int, int> _calls = new();
    private readonly Task _serving;

    public CallOutEndpoint(TimeSpan delay)
    {
        _delay = delay;
        var port = LoopbackPort.Free();
        Url = new Uri(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{port}/call"));
        _listener.Prefixes.Add(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{port}/"));
        _listener.Start();
        _serving = Task.Run(ServeAsync);
    }

    public Uri Url { get; }

    /// <summary>Calls received so far, by the workflow's n.</summary>
    public IReadOnlyDictionary<int, int> Calls => _calls;

    /// <summary>
    /// The service settings that open this endpoint to call-outs: outside Development the egress policy refuses loopback
    /// and every port but 80 and 443 unless the operator opens them. Builds from before the policy ignore them (they
    /// allowed every host).
    /// </summary>
    public IReadOnlyDictionary<string, string> ServiceSettings => new Dictionary<string, string>
    {
        ["CallOuts__AllowedNetworks__0"] = "127.0.0.1/32",
        ["CallOuts__AllowedPorts__0"] = Url.Port.ToString(CultureInfo.InvariantCulture),
    };

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
            if (_delay > TimeSpan.Zero)
            {
                await Task.Delay(_delay, _stop.Token);
            }

            var answer = Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"{{\"n\":{n},\"answered\":true}}"));
            context.Response.ContentType = "application/json";
            context.Response.ContentLength64 = answer.Length;
            await context.Response.OutputStream.WriteAsync(answer, _stop.Token);
            context.Response.Close();
        }
        catch (Exception e) when (e is OperationCanceledException or HttpListenerException or JsonException or KeyNotFoundException or InvalidOperationException or IOException)
        {
            context.Response.Abort();
        }
    }
}
