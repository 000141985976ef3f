using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>
/// A local OTLP/HTTP receiver for --telemetry otlp: accepts what a node exports (POST /v1/traces, /v1/metrics, /v1/logs,
/// protobuf), answers as a collector does (200, an empty export response), and counts requests, bytes and the spans in
/// each trace export, so that the report can say what the node sent. It keeps nothing else: the cost measured is the
/// node's (building, batching and sending), as with a collector on the same machine, whose CPU counts as other load.
/// </summary>
internal sealed class OtlpReceiver : IAsyncDisposable
{
    private readonly HttpListener _listener = new();
    private readonly Task _accepting;
    private long _traceRequests;
    private long _traceBytes;
    private long _spans;
    private long _metricRequests;
    private long _metricBytes;
    private long _otherRequests;
    private long _unreadable;

    private OtlpReceiver(int port)
    {
        Port = port;
        _listener.Prefixes.Add(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{port}/"));
        _listener.Start();
        _accepting = Task.Run(AcceptAsync);
    }

    public int Port { get; }

    /// <summary>The endpoint a node is given (OTEL_EXPORTER_OTLP_ENDPOINT, with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf).</summary>
    public string Endpoint => string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{Port}");

    public static OtlpReceiver Start() => new(FreePort());

    /// <summary>What arrived so far.</summary>
    public OtlpTotals Totals => new(
        Interlocked.Read(ref _traceRequests), Interlocked.Read(ref _traceBytes), Interlocked.Read(ref _spans),
        Interlocked.Read(ref _metricRequests), Interlocked.Read(ref _metricBytes), Interlocked.Read(ref _otherRequests),
        Interlocked.Read(ref _unreadable));

    private async Task AcceptAsync()
    {
        while (_listener.IsListening)
        {
            HttpListenerContext context;
            try
            {
                context = await _listener.GetContextAsync();
            }
            catch (Exception e) when (e is HttpListenerException or ObjectDisposedException or InvalidOperationException)
            {
                return;
            }

            _ = Task.Run(() => HandleAsync(context));
        }
    }

    private async Task HandleAsync(HttpListenerContext context)
    {
        try
        {
            using var body = new MemoryStream();
            await context.Request.InputStream.CopyToAsync(body);
            var bytes = body.ToArray();
            switch (context.Request.Url?.AbsolutePath)
            {
                case "/v1/traces":
                    Interlocked.Increment(ref _traceRequests);
                    Interlocked.Add(ref _traceBytes, bytes.Length);
                    if (context.Request.Headers["Content-Encoding"] is null && CountSpans(bytes) is { } spans)
                    {
                        Interlocked.Add(ref _spans, spans);
                    }
                    else
                    {
                        Interlocked.Increment(ref _unreadable);
                    }

                    break;
                case "/v1/metrics":
                    Interlocked.Increment(ref _metricRequests);
                    Interlocked.Add(ref _metricBytes, bytes.Length);
                    break;
                default:
                    Interlocked.Increment(ref _otherRequests);
                    break;
            }

            context.Response.StatusCode = 200;
            context.Response.ContentType = "application/x-protobuf";
            context.Response.ContentLength64 = 0;
        }
        catch (Exception e) when (e is HttpListenerException or IOException)
        {
            // The node gave up on this export (it is stopping): nothing to answer.
        }
        finally
        {
            context.Response.Close();
        }
    }

    /// <summary>
    /// The spans in an ExportTraceServiceRequest: resource_spans (field 1) → scope_spans (field 2) → spans (field 2). Null
    /// when the message cannot be read as protobuf.
    /// </summary>
    internal static long? CountSpans(ReadOnlySpan<byte> request)
    {
        long spans = 0;
        var ok = Fields(request, 1, resource =>
            Fields(resource, 2, scope =>
                Fields(scope, 2, _ =>
                {
                    spans++;
                    return true;
                })));
        return ok ? spans : null;
    }

    private delegate bool FieldVisitor(ReadOnlySpan<byte> value);

    /// <summary>Visits each length-delimited field <paramref name="number"/> of a message; false when it is not well-formed.</summary>
    private static bool Fields(ReadOnlySpan<byte> message, int number, FieldVisitor visit)
    {
        var at = 0;
        while (at < message.Length)
        {
            if (!Varint(message, ref at, out var key))
            {
                return false;
            }

            var field = (int)(key >> 3);
            switch ((int)(key & 7))
            {
                case 0:
                    if (!Varint(message, ref at, out _))
                    {
                        return false;
                    }

                    break;
                case 1:
                    at += 8;
                    break;
                case 5:
                    at += 4;
                    break;
                case 2:
                    if (!Varint(message, ref at, out var length) || length > (ulong)(message.Length - at))
                    {
                        return false;
                    }

                    if (field == number && !visit(message.Slice(at, (int)length)))
                    {
                        return false;
                    }

                    at += (int)length;
                    break;
                default:
                    return false;
            }
        }

        return at == message.Length;
    }

    private static bool Varint(ReadOnlySpan<byte> message, ref int at, out ulong value)
    {
        value = 0;
        for (var shift = 0; shift < 64 && at < message.Length; shift += 7)
        {
            var b = message[at++];
            value |= (ulong)(b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                return true;
            }
        }

        return false;
    }

    public async ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Close();
        await _accepting;
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}

/// <summary>What an <see cref="OtlpReceiver"/> received: trace and metric exports, their bytes, and the spans in them.</summary>
internal sealed record OtlpTotals(long TraceRequests, long TraceBytes, long Spans, long MetricRequests, long MetricBytes, long OtherRequests, long UnreadableTraceRequests);
