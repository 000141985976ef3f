using System.Net;
using System.Net.Http.Json;
using System.Text.Json.Nodes;
using Polly;
using Polly.Retry;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// The load client of a fault run: every call carries the load's own id as its Idempotency-Key, goes to whichever node is
/// up, and is retried (Polly, bounded) on no answer, a 5xx or a 429 with the same key, so that a retry can never start a
/// second instance or queue a second signal. Every acknowledged call goes into the <see cref="Ledger"/>.
/// </summary>
internal sealed class FaultClient : IDisposable
{
    /// <summary>One attempt's bound: above a node's pause and a database's command timeout, so that an attempt ends on its own.</summary>
    public static readonly TimeSpan AttemptTimeout = TimeSpan.FromSeconds(45);

    private readonly ServiceNodes _nodes;
    private readonly Ledger _ledger;
    private readonly HttpClient _http;
    private readonly ResiliencePipeline<HttpResponseMessage> _retry;

    public FaultClient(ServiceNodes nodes, Ledger ledger, string apiKey, int concurrency)
    {
        _nodes = nodes;
        _ledger = ledger;
        _http = new HttpClient(new SocketsHttpHandler
        {
            MaxConnectionsPerServer = concurrency * 2 + 8,
            // A killed node's pooled connections are dead: a short idle timeout keeps the pool from handing them out long.
            PooledConnectionIdleTimeout = TimeSpan.FromSeconds(5),
            ConnectTimeout = TimeSpan.FromSeconds(5),
        })
        {
            Timeout = AttemptTimeout,
        };
        _http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, apiKey);
        _retry = new ResiliencePipelineBuilder<HttpResponseMessage>()
            .AddRetry(new RetryStrategyOptions<HttpResponseMessage>
            {
                ShouldHandle = new PredicateBuilder<HttpResponseMessage>()
                    .Handle<HttpRequestException>()
                    .Handle<NoNodeUpException>()
                    .Handle<TaskCanceledException>(e => e.InnerException is TimeoutException)
                    .HandleResult(r => (int)r.StatusCode >= 500 || r.StatusCode == HttpStatusCode.TooManyRequests),
                // Up to about two minutes in all: longer than any node restart or outage a scenario makes, never unbounded.
                MaxRetryAttempts = 80,
                BackoffType = DelayBackoffType.Exponential,
                Delay = TimeSpan.FromMilliseconds(50),
                MaxDelay = TimeSpan.FromSeconds(1.5),
                UseJitter = true,
                OnRetry = args =>
                {
                    _ledger.Unanswered();
                    args.Outcome.Result?.Dispose();
                    return ValueTask.CompletedTask;
                },
            })
            .Build();
    }

    /// <summary>Starts an instance of <paramref name="definition"/>; the key makes retries return the same instance.</summary>
    public async Task<Guid> StartAsync(string definition, object? input, string clientId, CancellationToken cancellationToken)
    {
        var body = await SendAsync(HttpMethod.Post, "/instances", new { definition, input }, clientId, cancellationToken, HttpStatusCode.Created, HttpStatusCode.OK);
        var id = Guid.Parse((string)body!["id"]!);
        _ledger.Acknowledge(LedgerKind.Start, clientId, id, id);
        return id;
    }

    /// <summary>Sends a signal; the key makes retries return the signal already queued (200 instead of 202).</summary>
    public async Task<Guid> SignalAsync(Guid instanceId, string name, object? payload, string clientId, CancellationToken cancellationToken,
        DateTimeOffset? dueAt = null)
    {
        var body = await SendAsync(HttpMethod.Post, $"/instances/{instanceId}/signals", new { name, payload, dueAt }, clientId, cancellationToken,
            HttpStatusCode.Accepted, HttpStatusCode.OK);
        var id = Guid.Parse((string)body!["id"]!);
        _ledger.Acknowledge(LedgerKind.Signal, clientId, instanceId, id, name);
        return id;
    }

    /// <summary>Replays a dead letter: true when this call replayed it, false when the service answered 409 (it was not dead-lettered any more).</summary>
    public async Task<bool> ReplayAsync(Guid instanceId, Guid signalId, string clientId, CancellationToken cancellationToken)
    {
        var body = await SendAsync(HttpMethod.Post, $"/dead-letters/{signalId}/replay", null, clientId, cancellationToken, HttpStatusCode.Accepted, HttpStatusCode.Conflict);
        if (body is null)
        {
            _ledger.Refused();
            return false;
        }

        _ledger.Acknowledge(LedgerKind.Replay, clientId, instanceId, signalId);
        return true;
    }

    /// <summary>
    /// Suspends (<paramref name="suspend"/>) or resumes an instance: true when this call changed it, false when the
    /// service answered 409 (it was not waiting, or not suspended).
    /// </summary>
    public async Task<bool> SuspendOrResumeAsync(Guid instanceId, bool suspend, string clientId, CancellationToken cancellationToken)
    {
        var body = await SendAsync(HttpMethod.Post, $"/instances/{instanceId}/{(suspend ? "suspend" : "resume")}", suspend ? new { reason = "mass operation" } : null,
            clientId, cancellationToken, HttpStatusCode.OK, HttpStatusCode.Conflict);
        if (body is null)
        {
            _ledger.Refused();
            return false;
        }

        _ledger.Acknowledge(suspend ? LedgerKind.Suspend : LedgerKind.Resume, clientId, instanceId, instanceId);
        return true;
    }

    /// <summary>
    /// Every instance GET /instances?<paramref name="filter"/> lists, page by page with the list's cursor (next, passed as
    /// after), as a client that acts on each page while it pages would read them.
    /// </summary>
    public async IAsyncEnumerable<IReadOnlyList<Guid>> PagesAsync(string filter, int limit,
        [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken)
    {
        string? after = null;
        do
        {
            var page = await GetAsync($"/instances?{filter}&limit={limit}{(after is null ? "" : $"&after={after}")}", cancellationToken)
                ?? throw new InvalidOperationException($"GET /instances?{filter} answered 404");
            yield return page["items"]!.AsArray().Select(i => Guid.Parse((string)i!["id"]!)).ToList();
            after = (string?)page["next"];
        }
        while (after is not null);
    }

    /// <summary>
    /// Long-polls (GET /instances/{id}?waitFor=Completed) until the instance has completed, at most a minute: a closed
    /// loop, so that the load never queues more than its own concurrency. Whether it completed is the checker's to say.
    /// </summary>
    public async Task WaitForCompletionAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var deadline = DateTime.UtcNow.AddMinutes(1);
        while (DateTime.UtcNow < deadline)
        {
            var instance = await GetAsync($"/instances/{instanceId}?waitFor=Completed&timeout=20", cancellationToken);
            if (instance is null || (string?)instance["status"] == "Completed")
            {
                return;
            }
        }
    }

    /// <summary>A GET with the same failover, for reads a scenario needs (null for a 404).</summary>
    public async Task<JsonNode?> GetAsync(string path, CancellationToken cancellationToken)
    {
        using var response = await _retry.ExecuteAsync(async ct =>
        {
            var address = _nodes.NextAddress() ?? throw new NoNodeUpException();
            return await _http.GetAsync(new Uri(address, path), ct);
        }, cancellationToken);
        if (response.StatusCode == HttpStatusCode.NotFound)
        {
            return null;
        }

        await ExpectAsync(response, $"GET {path}", cancellationToken, HttpStatusCode.OK);
        return await response.Content.ReadFromJsonAsync<JsonNode>(cancellationToken);
    }

    public void Dispose() => _http.Dispose();

    /// <summary>Null for a 409 (when accepted); otherwise the body of an expected status, or an <see cref="ApiCallException"/>.</summary>
    private async Task<JsonObject?> SendAsync(HttpMethod method, string path, object? body, string clientId, CancellationToken cancellationToken,
        params HttpStatusCode[] expected)
    {
        using var response = await _retry.ExecuteAsync(async ct =>
        {
            var address = _nodes.NextAddress() ?? throw new NoNodeUpException();
            using var request = new HttpRequestMessage(method, new Uri(address, path)) { Content = body is null ? null : JsonContent.Create(body) };
            request.Headers.Add("Idempotency-Key", clientId);
            return await _http.SendAsync(request, ct);
        }, cancellationToken);
        await ExpectAsync(response, $"{method} {path} ({clientId})", cancellationToken, expected);
        return response.StatusCode == HttpStatusCode.Conflict ? null : await response.Content.ReadFromJsonAsync<JsonObject>(cancellationToken);
    }

    private static async Task ExpectAsync(HttpResponseMessage response, string call, CancellationToken cancellationToken, params HttpStatusCode[] expected)
    {
        if (!expected.Contains(response.StatusCode))
        {
            var text = await response.Content.ReadAsStringAsync(cancellationToken);
            throw new ApiCallException(call, response.StatusCode, text.Length > 300 ? text[..300] : text);
        }
    }

    /// <summary>Every node is down or frozen at this moment: retried like a refused connection.</summary>
    private sealed class NoNodeUpException() : Exception("no service node is up");
}
