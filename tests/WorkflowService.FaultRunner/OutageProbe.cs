using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>One answer a probe got: which node, what, and how long it took (null status: no answer within the probe's bound).</summary>
internal sealed record ProbeAnswer(string Node, string Call, HttpStatusCode? Status, bool RetryAfter, bool Problem, TimeSpan Took, long At);

/// <summary>
/// Asks every node, while a database fault lasts, what an operator's probe and a client would ask: GET /health/ready, a
/// start (POST /instances, a fresh key each time) and, if asked, a read of one instance. Records every answer with its
/// time; never retries.
/// </summary>
internal sealed class OutageProbe : IDisposable
{
    /// <summary>A probe that gets no answer within this has hung.</summary>
    public static readonly TimeSpan Bound = TimeSpan.FromSeconds(40);

    private readonly HttpClient _http;
    private readonly ConcurrentQueue<ProbeAnswer> _answers = new();
    private int _probe;

    private readonly Guid? _read;

    /// <param name="read">An instance to read on every round too (GET /instances/{id}), where reads must keep working.</param>
    public OutageProbe(string apiKey, Guid? read = null)
    {
        _read = read;
        _http = new HttpClient(new SocketsHttpHandler { PooledConnectionIdleTimeout = TimeSpan.FromSeconds(5) }) { Timeout = Bound };
        _http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, apiKey);
    }

    public IReadOnlyList<ProbeAnswer> Answers => [.. _answers];

    /// <summary>Probes every node every half second until <paramref name="stop"/> is cancelled.</summary>
    public async Task RunAsync(ServiceNodes nodes, CancellationToken stop)
    {
        var inFlight = new List<Task>();
        try
        {
            while (!stop.IsCancellationRequested)
            {
                foreach (var node in nodes.All.Where(n => n.Process is not null))
                {
                    var address = node.Process!.Address;
                    inFlight.Add(AskAsync(node.Name, "GET /health/ready", () => new HttpRequestMessage(HttpMethod.Get, new Uri(address, "/health/ready"))));
                    var key = $"probe-{Interlocked.Increment(ref _probe)}";
                    inFlight.Add(AskAsync(node.Name, "POST /instances", () =>
                    {
                        var request = new HttpRequestMessage(HttpMethod.Post, new Uri(address, "/instances"))
                        {
                            Content = new StringContent($$"""{"definition":"{{TwoSignalLoad.Definition}}"}""", Encoding.UTF8, "application/json"),
                        };
                        request.Headers.Add("Idempotency-Key", key);
                        return request;
                    }));
                    if (_read is { } id)
                    {
                        inFlight.Add(AskAsync(node.Name, "GET /instances/{id}", () => new HttpRequestMessage(HttpMethod.Get, new Uri(address, $"/instances/{id}"))));
                    }
                }

                await Task.Delay(TimeSpan.FromMilliseconds(500), stop);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // The fault is over.
        }

        await Task.WhenAll(inFlight);
    }

    /// <summary>Whether every node's readiness answered 200 at or after <paramref name="since"/>; the first such time per node.</summary>
    public IReadOnlyDictionary<string, long> FirstHealthySince(long since) => Answers
        .Where(a => a.Call == "GET /health/ready" && a.At >= since && a.Status == HttpStatusCode.OK)
        .GroupBy(a => a.Node).ToDictionary(g => g.Key, g => g.Min(a => a.At));

    public void Dispose() => _http.Dispose();

    /// <summary>The answers counted by status, with the longest wait of each: "20× 503 (up to 3.1 s), 2× 201 (up to 0.0 s)".</summary>
    public static string Describe(IEnumerable<ProbeAnswer> answers) =>
        string.Join(", ", answers.GroupBy(a => a.Status is { } s ? ((int)s).ToString(CultureInfo.InvariantCulture) : "no answer").OrderBy(g => g.Key)
            .Select(g => string.Create(CultureInfo.InvariantCulture, $"{g.Count()}× {g.Key} (up to {g.Max(a => a.Took).TotalSeconds:0.0} s)"))) is { Length: > 0 } text ? text : "none";

    /// <summary>
    /// The embedded store's checks while its disk fails (full, read-only): between <paramref name="began"/> and
    /// <paramref name="ended"/>, starts answered 503 problem details with Retry-After (or served where they still could
    /// be) and at least one refused; reads served; the node's log naming the cause (any of <paramref name="logSays"/>).
    /// </summary>
    public void CheckWritesRefusedReadsServed(FaultOutcome outcome, long began, long ended, string fault, string log, params string[] logSays)
    {
        var during = Answers.Where(a => a.At >= began && a.At < ended).ToList();
        var writes = during.Where(a => a.Call == "POST /instances").ToList();
        var reads = during.Where(a => a.Call == "GET /instances/{id}").ToList();
        var wrongWrites = writes.Where(a => !(a.Status is HttpStatusCode.Created || (a.Status == HttpStatusCode.ServiceUnavailable && a.RetryAfter && a.Problem))).ToList();
        if (wrongWrites.Count > 0 || !writes.Any(a => a.Status == HttpStatusCode.ServiceUnavailable))
        {
            outcome.Failures.Add($"{fault}: starts were to be answered 503 problem details with Retry-After (or succeed where they still could): {Describe(writes)}");
        }

        if (reads.Count == 0 || reads.Any(a => a.Status != HttpStatusCode.OK))
        {
            outcome.Failures.Add($"{fault}: reads were to keep working: {Describe(reads)}");
        }

        if (!logSays.Any(phrase => log.Contains(phrase, StringComparison.OrdinalIgnoreCase)))
        {
            outcome.Failures.Add($"{fault}: the service's log does not say why (none of: {string.Join(", ", logSays.Select(p => $"'{p}'"))})");
        }
    }

    /// <summary>
    /// Waits until a start has been served at or after <paramref name="since"/>, at most <paramref name="bound"/>, then a
    /// few rounds more (so that the row sees the writes go on being served); the probe must be running.
    /// </summary>
    public async Task WaitForStartServedAsync(long since, TimeSpan bound, CancellationToken cancellationToken)
    {
        var waited = Stopwatch.StartNew();
        while (FirstStartServedSince(since) is null && waited.Elapsed < bound)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(250), cancellationToken);
        }

        await Task.Delay(TimeSpan.FromSeconds(2), cancellationToken);
    }

    /// <summary>The first start served at or after <paramref name="since"/>, or null.</summary>
    public long? FirstStartServedSince(long since) =>
        Answers.Where(a => a.Call == "POST /instances" && a.At >= since && a.Status == HttpStatusCode.Created).Select(a => (long?)a.At).Min();

    /// <summary>What the probe saw between <paramref name="began"/> and <paramref name="ended"/>: "starts ...; reads ...".</summary>
    public string DescribeWritesAndReads(long began, long ended)
    {
        var during = Answers.Where(a => a.At >= began && a.At < ended).ToList();
        return $"starts {Describe(during.Where(a => a.Call == "POST /instances"))}; reads {Describe(during.Where(a => a.Call == "GET /instances/{id}"))}";
    }

    private async Task AskAsync(string node, string call, Func<HttpRequestMessage> create)
    {
        var at = Stopwatch.GetTimestamp();
        try
        {
            using var request = create();
            using var response = await _http.SendAsync(request);
            _answers.Enqueue(new ProbeAnswer(node, call, response.StatusCode, response.Headers.RetryAfter is not null,
                response.Content.Headers.ContentType?.MediaType == "application/problem+json", Stopwatch.GetElapsedTime(at), at));
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            _answers.Enqueue(new ProbeAnswer(node, call, null, false, false, Stopwatch.GetElapsedTime(at), at));
        }
    }
}
