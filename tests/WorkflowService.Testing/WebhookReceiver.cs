using System.Collections.Concurrent;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace WorkflowService.Testing;

/// <summary>
/// A business application's webhook receiver for the runners (fault rows, event benchmarks): Kestrel on a loopback port
/// of its own, answering every POST 200 after <see cref="AnswerDelay"/>. It records each request with its arrival order
/// and time, and checks its Standard Webhooks signature with a verifier written here from the specification (not the
/// service's code). <see cref="GoDownAsync"/> stops listening (connections are refused) and <see cref="ComeBackAsync"/>
/// listens again on the same port, as a receiver that is down for a while.
/// </summary>
internal sealed class WebhookReceiver : IAsyncDisposable
{
    private readonly ConcurrentQueue<WebhookReceipt> _receipts = new();
    private readonly ConcurrentDictionary<string, bool> _ids = new(StringComparer.Ordinal);
    private readonly SemaphoreSlim _switch = new(1, 1);
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA2213:Disposable fields should be disposed", Justification = "GoDownAsync disposes it; DisposeAsync calls that.")]
    private WebApplication? _app;
    private long _order;
    private byte[]? _key;

    private WebhookReceiver(int port) => Url = new Uri(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{port}/hooks"));

    /// <summary>Where the subscription points.</summary>
    public Uri Url { get; }

    /// <summary>How long each request waits before its 200 (zero: at once); a slow receiver keeps deliveries in flight.</summary>
    public TimeSpan AnswerDelay { get; set; }

    /// <summary>The settings that open this receiver to a service outside Development: loopback, its port, plain http.</summary>
    public IReadOnlyDictionary<string, string> ServiceSettings => new Dictionary<string, string>
    {
        ["CallOuts__AllowedNetworks__0"] = "127.0.0.1/32",
        ["CallOuts__AllowedPorts__0"] = Url.Port.ToString(CultureInfo.InvariantCulture),
        ["Events__AllowHttpEndpoints"] = "true",
    };

    /// <summary>Every request so far, in arrival order.</summary>
    public IReadOnlyList<WebhookReceipt> Receipts => [.. _receipts];

    public int Count => _receipts.Count;

    /// <summary>How many distinct events (CloudEvent ids: one per delivery, the receiver serving one subscription) arrived.</summary>
    public int DistinctCount => _ids.Count;

    public static async Task<WebhookReceiver> StartAsync(CancellationToken cancellationToken)
    {
        var receiver = new WebhookReceiver(LoopbackPort.Free());
        await receiver.ComeBackAsync(cancellationToken);
        return receiver;
    }

    /// <summary>The subscription's secret (<c>whsec_</c> and base64), for the signature check of every later request.</summary>
    public void UseSecret(string secret) =>
        Volatile.Write(ref _key, Convert.FromBase64String(secret.StartsWith("whsec_", StringComparison.Ordinal) ? secret[6..] : secret));

    /// <summary>Stops listening: new connections are refused, requests under way are dropped.</summary>
    public async Task GoDownAsync()
    {
        await _switch.WaitAsync();
        try
        {
            if (_app is { } app)
            {
                _app = null;
                // A cancelled token: no grace for requests under way, as when a receiver's process goes away.
                await app.StopAsync(new CancellationToken(canceled: true));
                await app.DisposeAsync();
            }
        }
        finally
        {
            _switch.Release();
        }
    }

    /// <summary>Listens again on the same port.</summary>
    public async Task ComeBackAsync(CancellationToken cancellationToken)
    {
        await _switch.WaitAsync(cancellationToken);
        try
        {
            if (_app is not null)
            {
                return;
            }

            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.UseUrls(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{Url.Port}"));
            builder.Logging.ClearProviders();
            var app = builder.Build();
            app.MapPost(Url.AbsolutePath, (Delegate)ReceiveAsync);
            await app.StartAsync(cancellationToken);
            _app = app;
        }
        finally
        {
            _switch.Release();
        }
    }

    /// <summary>
    /// Makes sure every node writes events for a new subscription to this receiver: each node (<paramref name="nodes"/>, one
    /// client each) starts probe instances of <paramref name="definition"/> until the receiver hears of one, since a node that
    /// has not read the subscription yet (Events:SubscriptionRefreshInterval) writes none. Returns the probes, for a run to
    /// leave out of its figures.
    /// </summary>
    public async Task<IReadOnlySet<Guid>> ProbeEveryNodeAsync(IEnumerable<WorkflowClient> nodes, string definition, object? input,
        CancellationToken cancellationToken)
    {
        var probes = new HashSet<Guid>();
        var waited = System.Diagnostics.Stopwatch.StartNew();
        foreach (var node in nodes)
        {
            while (true)
            {
                var id = Guid.Parse((string)(await node.StartAsync(definition, input, cancellationToken))["id"]!);
                probes.Add(id);
                var asked = System.Diagnostics.Stopwatch.StartNew();
                while (asked.Elapsed < TimeSpan.FromSeconds(2) && !_receipts.Any(r => r.InstanceId == id))
                {
                    await Task.Delay(20, cancellationToken);
                }

                if (_receipts.Any(r => r.InstanceId == id))
                {
                    break;
                }

                if (waited.Elapsed > TimeSpan.FromSeconds(30))
                {
                    throw new InvalidOperationException("a node wrote no event for its probe instances within 30 s of the subscription");
                }
            }
        }

        return probes;
    }

    public async ValueTask DisposeAsync()
    {
        await GoDownAsync();
        _switch.Dispose();
    }

    private async Task<IResult> ReceiveAsync(HttpRequest request)
    {
        var arrived = DateTime.UtcNow;
        var order = Interlocked.Increment(ref _order);
        using var buffer = new MemoryStream();
        await request.Body.CopyToAsync(buffer, request.HttpContext.RequestAborted);
        var body = buffer.ToArray();
        var id = request.Headers["webhook-id"].ToString();
        var timestamp = request.Headers["webhook-timestamp"].ToString();
        var signed = Verify(id, timestamp, body, request.Headers["webhook-signature"].ToString());
        using var json = JsonDocument.Parse(body);
        var root = json.RootElement;
        // A structured CloudEvent, or a batch of them (a JSON array): a receipt for each event, under its own id.
        foreach (var cloudEvent in root.ValueKind == JsonValueKind.Array ? root.EnumerateArray().ToList() : [root])
        {
            var eventId = cloudEvent.GetProperty("id").GetString()!;
            _ids.TryAdd(eventId, true);
            _receipts.Enqueue(new WebhookReceipt(order, arrived, eventId, cloudEvent.GetProperty("type").GetString()!,
                Guid.Parse(cloudEvent.GetProperty("workflowinstanceid").GetString()!), cloudEvent.GetProperty("time").GetDateTime().ToUniversalTime(),
                signed));
        }

        if (AnswerDelay > TimeSpan.Zero)
        {
            await Task.Delay(AnswerDelay, request.HttpContext.RequestAborted);
        }

        return Results.Ok();
    }

    /// <summary>
    /// The Standard Webhooks check: HMAC-SHA256 over "{id}.{timestamp}.{body}" with the secret's bytes, base64, against
    /// each space-separated "v1,..." signature. Null while no secret is known.
    /// </summary>
    private bool? Verify(string id, string timestamp, byte[] body, string signatures)
    {
        if (Volatile.Read(ref _key) is not { } key)
        {
            return null;
        }

        var signed = Encoding.UTF8.GetBytes($"{id}.{timestamp}.").Concat(body).ToArray();
        var expected = Encoding.ASCII.GetBytes(Convert.ToBase64String(HMACSHA256.HashData(key, signed)));
        return signatures.Split(' ').Any(s => s.StartsWith("v1,", StringComparison.Ordinal)
            && CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(s[3..]), expected));
    }
}

/// <summary>One event a <see cref="WebhookReceiver"/> got and answered 200 (a batch gives one for each of its events).</summary>
/// <param name="Order">Its request's place in arrival order (1, 2, …).</param>
/// <param name="ArrivedAt">When its request arrived (UTC, this machine's clock).</param>
/// <param name="Id">The CloudEvent's id: the same on every attempt, and one per delivery for a receiver of one subscription.</param>
/// <param name="Type">The CloudEvent's type.</param>
/// <param name="InstanceId">The CloudEvent's workflowinstanceid.</param>
/// <param name="EventTime">The CloudEvent's time: when the engine recorded the event, before its commit.</param>
/// <param name="Signed">Whether a signature verified with the secret (null: no secret known yet).</param>
internal sealed record WebhookReceipt(long Order, DateTime ArrivedAt, string Id, string Type, Guid InstanceId, DateTime EventTime, bool? Signed);
