using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json.Nodes;

namespace WorkflowService.Testing;

/// <summary>
/// The service's REST API as a load client uses it. Every call is bounded by the HttpClient's timeout; waits for an
/// instance use the service's long-poll (GET /instances/{id}?waitFor=...&amp;timeout=...), never sleep-polling.
/// </summary>
internal sealed class WorkflowClient : IDisposable
{
    /// <summary>The long-poll bound asked of the service; the HTTP timeout is above it.</summary>
    public const int LongPollSeconds = 30;

    private const int PageLimit = 500;
    private static readonly string[] EveryEvent = ["*"];
    private readonly HttpClient _http;

    /// <param name="apiKey">Sent in X-Api-Key on every request (null: no key, for a service without authentication).</param>
    public WorkflowClient(Uri address, int concurrency, string? apiKey)
    {
        _http = new HttpClient(new SocketsHttpHandler
        {
            MaxConnectionsPerServer = Math.Max(concurrency * 2, 16) + 8,
            PooledConnectionLifetime = TimeSpan.FromMinutes(10),
        })
        {
            BaseAddress = address,
            Timeout = TimeSpan.FromSeconds(LongPollSeconds + 30),
        };
        if (apiKey is not null)
        {
            _http.DefaultRequestHeaders.Add(BenchApiKey.HeaderName, apiKey);
        }
    }

    public async Task PublishAsync(string definitionJson, CancellationToken cancellationToken) =>
        await PublishVersionAsync(definitionJson, cancellationToken);

    /// <summary>Publishes a definition and returns the stored version (its name and version number).</summary>
    public async Task<JsonObject> PublishVersionAsync(string definitionJson, CancellationToken cancellationToken)
    {
        using var response = await _http.PostAsync("/definitions", new StringContent(definitionJson, Encoding.UTF8, "application/json"), cancellationToken);
        return await ExpectAsync(response, "POST /definitions", cancellationToken, HttpStatusCode.Created, HttpStatusCode.OK);
    }

    /// <summary>A text resource, e.g. a diagram (…/diagram.svg), read to its end.</summary>
    public async Task<string> GetTextAsync(string path, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync(path, cancellationToken);
        await ExpectStatusAsync(response, $"GET {path}", cancellationToken, HttpStatusCode.OK);
        return await response.Content.ReadAsStringAsync(cancellationToken);
    }

    public async Task<JsonObject> StartAsync(string definition, object? input, CancellationToken cancellationToken, string? businessKey = null)
    {
        using var response = await _http.PostAsJsonAsync("/instances", new { definition, input, businessKey }, cancellationToken);
        return await ExpectAsync(response, "POST /instances", cancellationToken, HttpStatusCode.Created);
    }

    public async Task<JsonObject> SignalAsync(Guid instanceId, string name, object? payload, CancellationToken cancellationToken, DateTimeOffset? dueAt = null)
    {
        using var response = await _http.PostAsJsonAsync($"/instances/{instanceId}/signals", new { name, payload, dueAt }, cancellationToken);
        return await ExpectAsync(response, $"POST /instances/{{id}}/signals ({name})", cancellationToken, HttpStatusCode.Accepted);
    }

    /// <summary>Signals the open instance of <paramref name="definition"/> with <paramref name="businessKey"/>, addressed by the key.</summary>
    public async Task<JsonObject> SignalByKeyAsync(string definition, string businessKey, string name, object? payload, CancellationToken cancellationToken)
    {
        using var response = await _http.PostAsJsonAsync(ByKey(definition, businessKey) + "/signals", new { name, payload }, cancellationToken);
        return await ExpectAsync(response, $"POST /definitions/{{name}}/instances/{{businessKey}}/signals ({name})", cancellationToken, HttpStatusCode.Accepted);
    }

    /// <summary>As <see cref="WaitForCompletionAsync"/>, the instance addressed by its definition and business key.</summary>
    public async Task<JsonObject> WaitForCompletionByKeyAsync(string definition, string businessKey, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync($"{ByKey(definition, businessKey)}?waitFor=Completed&timeout={LongPollSeconds}", cancellationToken);
        return await ExpectAsync(response, "GET /definitions/{name}/instances/{businessKey}?waitFor=Completed", cancellationToken, HttpStatusCode.OK);
    }

    /// <summary>Creates a schedule (POST /schedules, docs/schedules.md); the answer is its view.</summary>
    public async Task<JsonObject> CreateScheduleAsync(object schedule, CancellationToken cancellationToken)
    {
        using var response = await _http.PostAsJsonAsync("/schedules", schedule, cancellationToken);
        return await ExpectAsync(response, "POST /schedules", cancellationToken, HttpStatusCode.Created);
    }

    /// <summary>Long-polls until the instance is Completed (or can no longer change by itself), at most <see cref="LongPollSeconds"/>.</summary>
    public async Task<JsonObject> WaitForCompletionAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync($"/instances/{instanceId}?waitFor=Completed&timeout={LongPollSeconds}", cancellationToken);
        return await ExpectAsync(response, "GET /instances/{id}?waitFor=Completed", cancellationToken, HttpStatusCode.OK);
    }

    /// <summary>Long-polls until the instance's state is committed after <paramref name="revision"/>, at most <see cref="LongPollSeconds"/>.</summary>
    public async Task<JsonObject> WaitForRevisionAfterAsync(Guid instanceId, int revision, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync($"/instances/{instanceId}?afterRevision={revision}&timeout={LongPollSeconds}", cancellationToken);
        return await ExpectAsync(response, "GET /instances/{id}?afterRevision", cancellationToken, HttpStatusCode.OK);
    }

    public async Task<JsonObject> GetInstanceAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync($"/instances/{instanceId}", cancellationToken);
        return await ExpectAsync(response, "GET /instances/{id}", cancellationToken, HttpStatusCode.OK);
    }

    /// <summary>Every item of a list paged by cursor (a history, a ledger), page by page: each page's next passed as after until it is null.</summary>
    public async Task<JsonArray> GetItemsAsync(string path, CancellationToken cancellationToken)
    {
        var items = new JsonArray();
        string? next = null;
        do
        {
            var separator = path.Contains('?', StringComparison.Ordinal) ? '&' : '?';
            using var response = await _http.GetAsync(next is null ? path : $"{path}{separator}after={Uri.EscapeDataString(next)}", cancellationToken);
            await ExpectStatusAsync(response, $"GET {path}", cancellationToken, HttpStatusCode.OK);
            var page = (await response.Content.ReadFromJsonAsync<JsonObject>(cancellationToken))!;
            foreach (var item in page["items"]!.AsArray())
            {
                items.Add(item?.DeepClone());
            }

            next = (string?)page["next"];
        }
        while (next is not null);

        return items;
    }

    /// <param name="user">Who completes it where authentication is off; null where it is on (the caller completes it).</param>
    public async Task<JsonObject> CompleteTaskAsync(Guid taskId, string? user, object result, CancellationToken cancellationToken)
    {
        using var response = await _http.PostAsJsonAsync($"/tasks/{taskId}/complete", new { user, result }, cancellationToken);
        return await ExpectAsync(response, "POST /tasks/{id}/complete", cancellationToken, HttpStatusCode.OK);
    }

    /// <summary>The node's own counters (GET /metrics); answered from memory, it issues no database query.</summary>
    public async Task<NodeCounters> GetNodeCountersAsync(CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync("/metrics", cancellationToken);
        return NodeCounters.Parse(await ExpectAsync(response, "GET /metrics", cancellationToken, HttpStatusCode.OK));
    }

    /// <summary>
    /// The node's JIT time so far (GET /metrics' jitCompilationMs) alone: the one counter every build since the warm-up
    /// began to read it reports (an interleaved run may load a build of an earlier commit).
    /// </summary>
    public async Task<double> GetJitCompilationMsAsync(CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync("/metrics", cancellationToken);
        var metrics = await ExpectAsync(response, "GET /metrics", cancellationToken, HttpStatusCode.OK);
        return metrics["jitCompilationMs"]?.GetValue<double>() ?? throw new InvalidOperationException($"GET /metrics has no 'jitCompilationMs': {metrics.ToJsonString()}");
    }

    /// <summary>A list endpoint's first page (its <c>total</c> and up to <c>limit</c> items).</summary>
    public async Task<JsonObject> GetPageAsync(string path, CancellationToken cancellationToken)
    {
        using var response = await _http.GetAsync(path, cancellationToken);
        return await ExpectAsync(response, $"GET {path}", cancellationToken, HttpStatusCode.OK);
    }

    public async Task<int> TotalAsync(string path, CancellationToken cancellationToken) =>
        (int)(await GetPageAsync(AddQuery(path, "limit=1"), cancellationToken))["total"]!;

    /// <summary>Every item of a paged list endpoint, page by page (bounded by <paramref name="maxItems"/>).</summary>
    public async Task<List<JsonObject>> ListAllAsync(string path, int maxItems, CancellationToken cancellationToken)
    {
        var items = new List<JsonObject>();
        for (var offset = 0; offset < maxItems; offset += PageLimit)
        {
            var page = await GetPageAsync(AddQuery(path, $"offset={offset}&limit={PageLimit}"), cancellationToken);
            var batch = page["items"]!.AsArray();
            items.AddRange(batch.Select(i => i!.AsObject()));
            if (batch.Count < PageLimit || offset + PageLimit >= (int)page["total"]!)
            {
                break;
            }
        }

        return items;
    }

    /// <summary>Subscribes <paramref name="endpoint"/> to every event of <paramref name="definitions"/>; the answer holds its id and secret.</summary>
    public async Task<JsonObject> SubscribeAsync(string name, Uri endpoint, IReadOnlyList<string> definitions, CancellationToken cancellationToken,
        int? maxEventsPerBatch = null)
    {
        using var response = await _http.PostAsJsonAsync("/subscriptions",
            new { name, endpoint = endpoint.ToString(), events = EveryEvent, definitions, maxEventsPerBatch }, cancellationToken);
        return await ExpectAsync(response, "POST /subscriptions", cancellationToken, HttpStatusCode.Created);
    }

    /// <summary>Pauses (<paramref name="pause"/>) or resumes a subscription.</summary>
    public async Task PauseOrResumeAsync(string subscriptionId, bool pause, CancellationToken cancellationToken)
    {
        var action = pause ? "pause" : "resume";
        using var response = await _http.PostAsync($"/subscriptions/{subscriptionId}/{action}", null, cancellationToken);
        await ExpectStatusAsync(response, $"POST /subscriptions/{{id}}/{action}", cancellationToken, HttpStatusCode.OK, HttpStatusCode.NoContent);
    }

    public void Dispose() => _http.Dispose();

    private static string ByKey(string definition, string businessKey) =>
        $"/definitions/{Uri.EscapeDataString(definition)}/instances/{Uri.EscapeDataString(businessKey)}";

    private static string AddQuery(string path, string query) => path + (path.Contains('?', StringComparison.Ordinal) ? "&" : "?") + query;

    private static async Task<JsonObject> ExpectAsync(HttpResponseMessage response, string call, CancellationToken cancellationToken, params HttpStatusCode[] expected)
    {
        await ExpectStatusAsync(response, call, cancellationToken, expected);
        return (await response.Content.ReadFromJsonAsync<JsonObject>(cancellationToken))!;
    }

    private static async Task ExpectStatusAsync(HttpResponseMessage response, string call, CancellationToken cancellationToken, params HttpStatusCode[] expected)
    {
        if (!expected.Contains(response.StatusCode))
        {
            var body = await response.Content.ReadAsStringAsync(cancellationToken);
            throw new ApiCallException(call, response.StatusCode, body.Length > 300 ? body[..300] : body);
        }
    }
}
