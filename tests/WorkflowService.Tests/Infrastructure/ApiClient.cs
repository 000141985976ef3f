using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>Test-side helpers over the service's HTTP API; every call goes through the real pipeline.</summary>
public sealed class ApiClient(HttpClient http)
{
    private static readonly JsonSerializerOptions Json = WorkflowServiceFactory.Json;

    public HttpClient Http => http;

    public async Task<DefinitionView> PublishAsync(string definitionJson)
    {
        using var response = await http.PostAsync("/definitions", new StringContent(definitionJson, Encoding.UTF8, "application/json"));
        await EnsureAsync(response, HttpStatusCode.Created);
        return (await response.Content.ReadFromJsonAsync<DefinitionView>(Json))!;
    }

    public async Task<DefinitionView> PublishExampleAsync(string file) =>
        await PublishAsync(await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", file)));

    public async Task<InstanceView> StartAsync(string definition, object? input = null, string? businessKey = null,
        string? idempotencyKey = null, HttpStatusCode expected = HttpStatusCode.Created, int? version = null)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/instances")
        {
            Content = JsonContent.Create(new { definition, version, input, businessKey }, options: Json),
        };
        if (idempotencyKey is not null)
        {
            request.Headers.Add("Idempotency-Key", idempotencyKey);
        }

        using var response = await http.SendAsync(request);
        await EnsureAsync(response, expected);
        return (await response.Content.ReadFromJsonAsync<InstanceView>(Json))!;
    }

    public async Task<SignalView> SignalAsync(Guid instanceId, string name, object? payload = null, DateTimeOffset? dueAt = null,
        string? idempotencyKey = null, HttpStatusCode expected = HttpStatusCode.Accepted)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"/instances/{instanceId}/signals")
        {
            Content = JsonContent.Create(new { name, payload, dueAt }, options: Json),
        };
        if (idempotencyKey is not null)
        {
            request.Headers.Add("Idempotency-Key", idempotencyKey);
        }

        using var response = await http.SendAsync(request);
        await EnsureAsync(response, expected);
        return (await response.Content.ReadFromJsonAsync<SignalView>(Json))!;
    }

    /// <summary>
    /// Publishes the signal-roundtrip definition under a fresh name and runs <paramref name="count"/> instances of it to
    /// completion (start, signal "go", wait): the work a telemetry test then expects to see counted. Returns the name.
    /// </summary>
    public async Task<string> CompleteRoundtripsAsync(string prefix, int count)
    {
        var name = Definitions.Unique(prefix);
        await PublishAsync(Definitions.SignalRoundtrip(name));
        for (var i = 0; i < count; i++)
        {
            var instance = await StartAsync(name);
            await SignalAsync(instance.Id, "go", new { value = i });
            await WaitForAsync(instance.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        }

        return name;
    }

    public async Task<InstanceView> GetAsync(Guid id) =>
        (await http.GetFromJsonAsync<InstanceView>($"/instances/{id}", Json))!;

    /// <summary>Long-polls the service (no sleeping here) until the instance has the status, with a deadline.</summary>
    public async Task<InstanceView> WaitForAsync(Guid id, InstanceStatus status, TimeSpan? deadline = null)
    {
        var until = DateTime.UtcNow + (deadline ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            var instance = (await http.GetFromJsonAsync<InstanceView>($"/instances/{id}?waitFor={status}&timeout=5", Json))!;
            if (instance.Status == status)
            {
                return instance;
            }

            if (DateTime.UtcNow > until || instance.Status.IsTerminal() || (instance.Status == InstanceStatus.Faulted && status != InstanceStatus.Faulted))
            {
                Assert.Fail($"instance {id} is {instance.Status} (error: {instance.Error}), expected {status}");
            }
        }
    }

    /// <summary>
    /// Sends <paramref name="count"/> signals named <paramref name="name"/>, each once the one before was applied, so that
    /// each is a commit (a stored history row) of its own; the payload is the signal's number.
    /// </summary>
    public async Task SignalOneAfterAnotherAsync(Guid id, string name, int count)
    {
        for (var n = 0; n < count; n++)
        {
            var before = (await GetAsync(id)).Revision;
            await SignalAsync(id, name, new { n });
            await Eventually.WaitUntilAsync(async () => (await GetAsync(id)).Revision > before, what: $"signal {name} {n} applied");
        }
    }

    /// <summary>The instance's whole history, read page by page.</summary>
    public Task<IReadOnlyList<HistoryEventView>> HistoryAsync(Guid id) => EveryPageAsync<HistoryEventView>($"/instances/{id}/history");

    /// <summary>The instance's whole ledger, read page by page.</summary>
    public Task<IReadOnlyList<SignalView>> SignalsAsync(Guid id) => EveryPageAsync<SignalView>($"/instances/{id}/signals");

    /// <summary>The pages of a cursor-paged list at <paramref name="path"/>, from the first, each page's next passed as after until it is null.</summary>
    public async Task<IReadOnlyList<PageView<T>>> PagesAsync<T>(string path)
    {
        var pages = new List<PageView<T>>();
        string? next = null;
        do
        {
            var separator = path.Contains('?', StringComparison.Ordinal) ? '&' : '?';
            var page = (await http.GetFromJsonAsync<PageView<T>>(next is null ? path : $"{path}{separator}after={Uri.EscapeDataString(next)}", Json))!;
            pages.Add(page);
            next = page.Next;
            Assert.True(pages.Count <= 10_000, $"{path} gave a next on {pages.Count} pages");
        }
        while (next is not null);

        return pages;
    }

    public async Task<IReadOnlyList<T>> EveryPageAsync<T>(string path) => [.. (await PagesAsync<T>(path)).SelectMany(p => p.Items)];

    public static async Task<JsonObject> ProblemAsync(HttpResponseMessage response, HttpStatusCode expected)
    {
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == expected, $"expected {(int)expected}, got {(int)response.StatusCode}: {body}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        var problem = JsonNode.Parse(body)!.AsObject();
        Assert.Equal((int)expected, (int)problem["status"]!);
        Assert.False(string.IsNullOrWhiteSpace((string?)problem["detail"] ?? (string?)problem["title"]));
        return problem;
    }

    private static async Task EnsureAsync(HttpResponseMessage response, HttpStatusCode expected)
    {
        if (response.StatusCode != expected)
        {
            Assert.Fail($"expected {(int)expected}, got {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        }
    }
}
