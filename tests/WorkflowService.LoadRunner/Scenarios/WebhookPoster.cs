using System.Buffers;
using System.Globalization;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The HTTP traffic of events out without the service's outbox: for each workflow, two signed CloudEvents of the size and
/// shape the service posts (its start and its completion), posted one after the other from the runner's process to a
/// <see cref="WebhookReceiver"/> in it, over one pooled client. What posting alone costs this machine (client, loopback,
/// receiver), measured against a variant that does nothing of the kind (the interleaved run's posts-alone). As the
/// service's dispatcher does, it posts apart from the load: a workflow queues its pair and goes on; workers post them.
/// The queue is bounded, so posting that falls behind slows the load rather than piling up.
/// </summary>
internal sealed class WebhookPoster : IAsyncDisposable
{
    private const int Workers = 8;
    private const int QueueCapacity = 4096;

    private readonly Channel<int> _queue = Channel.CreateBounded<int>(new BoundedChannelOptions(QueueCapacity) { FullMode = BoundedChannelFullMode.Wait });
    private readonly Task[] _workers;
    private long _failures;
    private long _pending;

    private static readonly MediaTypeHeaderValue CloudEventsJson = new("application/cloudevents+json") { CharSet = "utf-8" };

    private readonly HttpClient _client = new(new SocketsHttpHandler { PooledConnectionLifetime = Timeout.InfiniteTimeSpan })
    {
        Timeout = TimeSpan.FromSeconds(30),
    };

    private readonly Uri _endpoint;
    private readonly byte[] _key = RandomNumberGenerator.GetBytes(32);

    public WebhookPoster(WebhookReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        _endpoint = receiver.Url;
        receiver.UseSecret("whsec_" + Convert.ToBase64String(_key));
        _workers = [.. Enumerable.Range(0, Workers).Select(_ => Task.Run(PostQueuedAsync))];
    }

    /// <summary>Posts that failed (none is expected: the receiver answers 200).</summary>
    public long Failures => Interlocked.Read(ref _failures);

    /// <summary>Queues the two events of workflow <paramref name="index"/>; waits only while the queue is full.</summary>
    public ValueTask QueueAsync(int index, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _pending);
        return _queue.Writer.WriteAsync(index, cancellationToken);
    }

    /// <summary>
    /// Until every queued pair is posted, or <paramref name="deadline"/> passes (false): a window's posts are its own, not
    /// the next window's.
    /// </summary>
    public async Task<bool> WaitDrainedAsync(TimeSpan deadline, CancellationToken cancellationToken)
    {
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (Interlocked.Read(ref _pending) > 0)
        {
            if (waited.Elapsed > deadline)
            {
                return false;
            }

            await Task.Delay(5, cancellationToken);
        }

        return true;
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1031:Do not catch general exception types",
        Justification = "Whatever a post throws is counted and reported: a worker that stopped would stall the load once the queue is full.")]
    private async Task PostQueuedAsync()
    {
        await foreach (var index in _queue.Reader.ReadAllAsync())
        {
            try
            {
                await PostPairAsync(index, CancellationToken.None);
            }
            catch (Exception)
            {
                Interlocked.Increment(ref _failures);
            }
            finally
            {
                Interlocked.Decrement(ref _pending);
            }
        }
    }

    /// <summary>Posts the two events of workflow <paramref name="index"/>, in order, each answered before the next.</summary>
    private async Task PostPairAsync(int index, CancellationToken cancellationToken)
    {
        var instance = Guid.CreateVersion7();
        await PostAsync(Body(instance, index, "instance.started", "Running", "wait", output: false), cancellationToken);
        await PostAsync(Body(instance, index, "instance.completed", "Completed", "done", output: true), cancellationToken);
    }

    private async Task PostAsync(byte[] body, CancellationToken cancellationToken)
    {
        var id = Guid.CreateVersion7().ToString();
        var timestamp = DateTimeOffset.UtcNow.ToUnixTimeSeconds().ToString(CultureInfo.InvariantCulture);
        var signed = Encoding.UTF8.GetBytes($"{id}.{timestamp}.").Concat(body).ToArray();
        using var request = new HttpRequestMessage(HttpMethod.Post, _endpoint)
        {
            Content = new ByteArrayContent(body) { Headers = { ContentType = CloudEventsJson } },
        };
        request.Headers.TryAddWithoutValidation("webhook-id", id);
        request.Headers.TryAddWithoutValidation("webhook-timestamp", timestamp);
        request.Headers.TryAddWithoutValidation("webhook-signature", "v1," + Convert.ToBase64String(HMACSHA256.HashData(_key, signed)));
        using var response = await _client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
        response.EnsureSuccessStatusCode();
    }

    /// <summary>A structured CloudEvent as the service writes one for signal-roundtrip (the same attributes and data).</summary>
    private static byte[] Body(Guid instance, int index, string type, string status, string step, bool output)
    {
        var buffer = new ArrayBufferWriter<byte>(1024);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("specversion", "1.0");
            json.WriteString("id", Guid.CreateVersion7().ToString());
            json.WriteString("type", type);
            json.WriteString("source", $"/instances/{instance}");
            json.WriteString("subject", step);
            json.WriteString("time", DateTime.UtcNow);
            json.WriteString("datacontenttype", "application/json");
            json.WriteString("workflowinstanceid", instance.ToString());
            json.WriteString("workflowdefinition", SignalRoundtripScenario.Definition);
            json.WriteString("workflowversion", "1");
            json.WriteString("workflowtenant", string.Empty);
            json.WriteStartObject("data");
            json.WriteString("instanceId", instance);
            json.WriteString("definition", SignalRoundtripScenario.Definition);
            json.WriteNumber("version", 1);
            json.WriteString("status", status);
            json.WriteString("step", step);
            if (output)
            {
                json.WriteStartObject("output");
                json.WriteStartObject("result");
                json.WriteNumber("value", index);
                json.WriteEndObject();
                json.WriteEndObject();
            }

            json.WriteEndObject();
            json.WriteEndObject();
        }

        return buffer.WrittenSpan.ToArray();
    }

    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        await Task.WhenAll(_workers);
        _client.Dispose();
    }
}
