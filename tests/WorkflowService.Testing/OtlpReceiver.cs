using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Testing;

/// <summary>
/// A local OTLP/HTTP receiver: accepts what a node exports (POST /v1/traces, /v1/metrics, /v1/logs, protobuf), answers as a
/// collector does (200, an empty export response), and reads enough of each export to say what arrived: spans by name,
/// metrics by name with their units, log records and how many carry a trace id. The benchmark runner uses it for
/// --telemetry otlp (the node's export cost, with the receiver's CPU as other load); the tests use it as the collector
/// that proves the OTLP names end to end.
/// </summary>
internal sealed class OtlpReceiver : IAsyncDisposable
{
    private readonly HttpListener _listener = new();
    private readonly Task _accepting;
    private readonly ConcurrentDictionary<string, long> _spanNames = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, string> _metricUnits = new(StringComparer.Ordinal);
    private long _traceRequests;
    private long _traceBytes;
    private long _spans;
    private long _metricRequests;
    private long _metricBytes;
    private long _logRequests;
    private long _logRecords;
    private long _tracedLogRecords;
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

    public static OtlpReceiver Start() => new(LoopbackPort.Free());

    /// <summary>What arrived so far.</summary>
    public OtlpTotals Totals => new(
        Interlocked.Read(ref _traceRequests), Interlocked.Read(ref _traceBytes), Interlocked.Read(ref _spans),
        Interlocked.Read(ref _metricRequests), Interlocked.Read(ref _metricBytes),
        Interlocked.Read(ref _logRequests), Interlocked.Read(ref _logRecords), Interlocked.Read(ref _tracedLogRecords),
        Interlocked.Read(ref _unreadable));

    /// <summary>The spans received, counted by name.</summary>
    public IReadOnlyDictionary<string, long> SpanNames => new Dictionary<string, long>(_spanNames, StringComparer.Ordinal);

    /// <summary>The metrics received, by name, with their units.</summary>
    public IReadOnlyDictionary<string, string> MetricUnits => new Dictionary<string, string>(_metricUnits, StringComparer.Ordinal);

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

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "One export's handling, started and not awaited: whatever goes wrong is counted as unreadable, never an unobserved task.")]
    private async Task HandleAsync(HttpListenerContext context)
    {
        try
        {
            using var body = new MemoryStream();
            await context.Request.InputStream.CopyToAsync(body);
            var bytes = body.ToArray();
            var readable = context.Request.Headers["Content-Encoding"] is null && Read(context.Request.Url?.AbsolutePath, bytes);
            if (!readable)
            {
                Interlocked.Increment(ref _unreadable);
            }

            context.Response.StatusCode = 200;
            context.Response.ContentType = "application/x-protobuf";
            context.Response.ContentLength64 = 0;
            context.Response.Close();
        }
        catch (Exception)
        {
            // The node gave up on this export, or the receiver is stopping: nothing to answer.
            Interlocked.Increment(ref _unreadable);
            try
            {
                context.Response.Abort();
            }
            catch (ObjectDisposedException)
            {
                // Closed already.
            }
        }
    }

    /// <summary>The service settings that send a node's telemetry here, the standard way (OTEL_* variables).</summary>
    public IReadOnlyDictionary<string, string> ServiceEnvironment(string serviceName) => new Dictionary<string, string>
    {
        ["OTEL_EXPORTER_OTLP_ENDPOINT"] = Endpoint,
        ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
        // Metrics every 10 s rather than the default minute, so that a measured window carries their cost.
        ["OTEL_METRIC_EXPORT_INTERVAL"] = "10000",
        ["OTEL_SERVICE_NAME"] = serviceName,
    };

    private bool Read(string? path, byte[] export)
    {
        switch (path)
        {
            case "/v1/traces":
                Interlocked.Increment(ref _traceRequests);
                Interlocked.Add(ref _traceBytes, export.Length);
                return Records(export, span =>
                {
                    Interlocked.Increment(ref _spans);
                    _spanNames.AddOrUpdate(Text(span, 5) ?? "", 1, (_, n) => n + 1);
                    return true;
                });
            case "/v1/metrics":
                Interlocked.Increment(ref _metricRequests);
                Interlocked.Add(ref _metricBytes, export.Length);
                return Records(export, metric =>
                {
                    _metricUnits[Text(metric, 1) ?? ""] = Text(metric, 3) ?? "";
                    return true;
                });
            case "/v1/logs":
                Interlocked.Increment(ref _logRequests);
                return Records(export, record =>
                {
                    Interlocked.Increment(ref _logRecords);
                    if (Bytes(record, 9) is { Length: 16 } traceId && traceId.ContainsAnyExcept((byte)0))
                    {
                        Interlocked.Increment(ref _tracedLogRecords);
                    }

                    return true;
                });
            default:
                return false;
        }
    }

    /// <summary>The spans in an ExportTraceServiceRequest, or null when it cannot be read as protobuf.</summary>
    internal static long? CountSpans(ReadOnlySpan<byte> request)
    {
        long spans = 0;
        return Records(request, _ =>
        {
            spans++;
            return true;
        }) ? spans : null;
    }

    /// <summary>
    /// Visits the records of an OTLP export request: spans, metrics or log records, which all sit two levels down
    /// (resource_* field 1, scope_* field 2, the records field 2). False when the message is not well-formed.
    /// </summary>
    private static bool Records(ReadOnlySpan<byte> request, FieldVisitor visit) =>
        Fields(request, 1, resource => Fields(resource, 2, scope => Fields(scope, 2, visit)));

    /// <summary>The first length-delimited field <paramref name="number"/> of a message, as UTF-8 text.</summary>
    private static string? Text(ReadOnlySpan<byte> message, int number) =>
        Bytes(message, number) is { } value ? System.Text.Encoding.UTF8.GetString(value) : null;

    /// <summary>The first length-delimited field <paramref name="number"/> of a message.</summary>
    private static byte[]? Bytes(ReadOnlySpan<byte> message, int number)
    {
        byte[]? found = null;
        Fields(message, number, value =>
        {
            found ??= value.ToArray();
            return true;
        });
        return found;
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
}

/// <summary>What an <see cref="OtlpReceiver"/> received: exports of each signal, their bytes, and the records in them.</summary>
internal sealed record OtlpTotals(
    long TraceRequests, long TraceBytes, long Spans, long MetricRequests, long MetricBytes, long LogRequests, long LogRecords,
    long TracedLogRecords, long UnreadableRequests);
