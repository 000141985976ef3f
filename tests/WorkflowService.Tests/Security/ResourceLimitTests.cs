using System.Net;
using System.Net.Http.Json;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Security;

/// <summary>
/// The limits a caller meets (request rate, waiting requests, definition size and steps), the headers of every answer,
/// CORS, and secrets read from mounted files. Each test starts a service with the settings it is about.
/// </summary>
public sealed class ResourceLimitTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_caller_over_its_rate_gets_429_with_retry_after_and_another_caller_is_not_held_up()
    {
        var greedy = TestApiKey.Create("greedy", "admin");
        var polite = TestApiKey.Create("polite", "admin");
        var (factory, _) = await StartServiceAsync(new(TestApiKey.Settings(greedy, polite))
        {
            ["RateLimiting:PermitsPerPeriod"] = "3",
            ["RateLimiting:Burst"] = "3",
            ["RateLimiting:Period"] = "00:10:00",
        });
        using var greedyClient = Client(factory, greedy);
        using var politeClient = Client(factory, polite);

        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await greedyClient.GetAsync("/definitions")).StatusCode);
        }

        using var refused = await greedyClient.GetAsync("/definitions");
        var problem = await ApiClient.ProblemAsync(refused, HttpStatusCode.TooManyRequests);
        Assert.True(int.Parse(refused.Headers.GetValues("Retry-After").Single(), System.Globalization.CultureInfo.InvariantCulture) >= 1);
        Assert.Contains("retry after", (string?)problem["detail"], StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, (await politeClient.GetAsync("/definitions")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await greedyClient.GetAsync("/health/ready")).StatusCode);
    }

    [Fact]
    public async Task A_node_holding_its_most_long_polls_answers_503_with_retry_after_and_takes_them_again_once_one_ends()
    {
        var (factory, api) = await StartServiceAsync(new() { ["RateLimiting:MaxConcurrentLongPolls"] = "1" });
        await api.PublishExampleAsync("signal-roundtrip.json");
        var instance = await api.StartAsync("signal-roundtrip");
        var gate = factory.Services.GetRequiredService<LongPollGate>();

        using var first = factory.CreateClient();
        var waiting = first.GetAsync($"/instances/{instance.Id}?waitFor=Completed&timeout=60");
        await Eventually.WaitUntilAsync(() => Task.FromResult(gate.InUse == 1));

        using var refused = await api.Http.GetAsync($"/instances/{instance.Id}?waitFor=Completed&timeout=60");
        await ApiClient.ProblemAsync(refused, HttpStatusCode.ServiceUnavailable);
        Assert.Equal("1", refused.Headers.GetValues("Retry-After").Single());
        Assert.Equal(HttpStatusCode.OK, (await api.Http.GetAsync($"/instances/{instance.Id}")).StatusCode);

        await api.SignalAsync(instance.Id, "go", new { value = "done" });
        using var answered = await waiting;
        Assert.Equal(InstanceStatus.Completed, (await answered.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!.Status);
        Assert.Equal(0, gate.InUse);
        Assert.Equal(HttpStatusCode.OK, (await api.Http.GetAsync($"/instances/{instance.Id}?waitFor=Completed&timeout=1")).StatusCode);
    }

    [Fact]
    public async Task A_caller_holding_its_share_of_long_polls_gets_429_and_another_caller_still_waits_on_the_same_node()
    {
        var greedy = TestApiKey.Create("greedy-poller", "admin");
        var polite = TestApiKey.Create("polite-poller", "admin");
        var (factory, _) = await StartServiceAsync(new(TestApiKey.Settings(greedy, polite)) { ["RateLimiting:MaxLongPollsPerCaller"] = "2" });
        using var greedyClient = Client(factory, greedy);
        using var politeClient = Client(factory, polite);
        var api = new ApiClient(greedyClient);
        await api.PublishExampleAsync("signal-roundtrip.json");
        var instance = await api.StartAsync("signal-roundtrip");
        var gate = factory.Services.GetRequiredService<LongPollGate>();
        var wait = $"/instances/{instance.Id}?waitFor=Completed&timeout=60";

        var held = new[] { greedyClient.GetAsync(wait), greedyClient.GetAsync(wait) };
        await Eventually.WaitUntilAsync(() => gate.InUse == 2);

        using var refused = await greedyClient.GetAsync(wait);
        var problem = await ApiClient.ProblemAsync(refused, HttpStatusCode.TooManyRequests);
        Assert.Equal("1", refused.Headers.GetValues("Retry-After").Single());
        Assert.Contains("holds 2 waiting requests", (string?)problem["detail"], StringComparison.Ordinal);
        var politeWait = politeClient.GetAsync(wait);
        await Eventually.WaitUntilAsync(() => gate.InUse == 3);

        await api.SignalAsync(instance.Id, "go", new { value = "done" });
        foreach (var answer in await Task.WhenAll([.. held, politeWait]))
        {
            using (answer)
            {
                Assert.Equal(InstanceStatus.Completed, (await answer.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!.Status);
            }
        }

        Assert.Equal(0, gate.InUse);
        Assert.Equal(0, gate.HeldBy("key:greedy-poller"));
    }

    [Fact]
    public async Task A_definition_over_the_size_or_step_limit_is_refused_and_nothing_is_published()
    {
        var (_, api) = await StartServiceAsync(new() { ["Api:MaxDefinitionBytes"] = "2048", ["Api:MaxDefinitionSteps"] = "3" });
        var name = Definitions.Unique("capped");
        var steps = string.Join(", ", Enumerable.Range(0, 3).Select(i => $$"""{ "id": "s{{i}}", "type": "setVariables", "set": { "x": "{{i}}" } }"""));
        var fourSteps = $$"""{ "name": "{{name}}", "steps": [ {{steps}}, { "id": "end", "type": "complete" } ] }""";
        var tooBig = $$"""{ "name": "{{name}}", "description": "{{new string('x', 3000)}}", "steps": [ { "id": "end", "type": "complete" } ] }""";

        var manySteps = await ApiClient.ProblemAsync(
            await api.Http.PostAsync("/definitions", new StringContent(fourSteps, Encoding.UTF8, "application/json")), HttpStatusCode.UnprocessableEntity);
        Assert.Equal("the definition has 4 steps; this service accepts at most 3", (string?)manySteps["diagnostics"]![0]!["message"]);
        Assert.Equal("$.steps", (string?)manySteps["diagnostics"]![0]!["path"]);
        await ApiClient.ProblemAsync(
            await api.Http.PostAsync("/definitions", new StringContent(tooBig, Encoding.UTF8, "application/json")), HttpStatusCode.RequestEntityTooLarge);
        Assert.Equal(HttpStatusCode.NotFound, (await api.Http.GetAsync($"/definitions/{name}")).StatusCode);
    }

    [Fact]
    public async Task Answers_carry_nosniff_and_no_server_banner_and_cross_origin_calls_are_answered_only_for_configured_origins()
    {
        var (_, closed) = await StartServiceAsync([]);
        using var plain = await closed.Http.SendAsync(Preflight());
        Assert.Equal("nosniff", plain.Headers.GetValues("X-Content-Type-Options").Single());
        Assert.False(plain.Headers.Contains("Server"));
        Assert.False(plain.Headers.Contains("Access-Control-Allow-Origin"));
        // Answers the exception handler writes (a malformed body here) carry it too.
        using var malformed = await closed.Http.PostAsync("/instances", new StringContent("{ not json", Encoding.UTF8, "application/json"));
        await ApiClient.ProblemAsync(malformed, HttpStatusCode.BadRequest);
        Assert.Equal("nosniff", malformed.Headers.GetValues("X-Content-Type-Options").Single());

        var (_, open) = await StartServiceAsync(new() { ["Http:CorsOrigins:0"] = "https://console.example.com" });
        using var allowed = await open.Http.SendAsync(Preflight());
        Assert.Equal("https://console.example.com", allowed.Headers.GetValues("Access-Control-Allow-Origin").Single());
        using var other = await open.Http.SendAsync(Preflight("https://evil.example.net"));
        Assert.False(other.Headers.Contains("Access-Control-Allow-Origin"));
    }

    [Fact]
    public async Task With_https_redirection_on_a_plain_http_call_is_sent_to_https()
    {
        var (factory, _) = await StartServiceAsync(new() { ["Http:HttpsRedirection"] = "true", ["https_port"] = "8443" });
        using var client = factory.CreateClient(new Microsoft.AspNetCore.Mvc.Testing.WebApplicationFactoryClientOptions { AllowAutoRedirect = false });

        using var response = await client.GetAsync("http://workflow.example.com/definitions");

        Assert.Equal(HttpStatusCode.TemporaryRedirect, response.StatusCode);
        Assert.Equal("https://workflow.example.com:8443/definitions", response.Headers.Location!.ToString());
    }

    [Fact]
    public async Task Keys_and_connection_strings_can_come_from_mounted_secret_files()
    {
        var key = TestApiKey.Create("from-a-file", "admin");
        var secrets = Directory.CreateTempSubdirectory("workflow-secrets-").FullName;
        await File.WriteAllTextAsync(Path.Combine(secrets, "Authentication__ApiKeys__0__Name"), key.Name);
        await File.WriteAllTextAsync(Path.Combine(secrets, "Authentication__ApiKeys__0__Hash"), key.Hash);
        await File.WriteAllTextAsync(Path.Combine(secrets, "Authentication__ApiKeys__0__Roles__0"), "admin");
        var (factory, anonymous) = await StartServiceAsync(new() { ["Secrets:Directory"] = secrets });

        using var withKey = Client(factory, key);
        Assert.Equal(HttpStatusCode.OK, (await withKey.GetAsync("/definitions")).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await anonymous.Http.GetAsync("/definitions")).StatusCode);
    }

    [Fact]
    public async Task An_http_step_to_a_host_outside_the_allowed_list_is_never_called()
    {
        await using var target = await CallOutTarget.StartAsync();
        var (_, api) = await StartServiceAsync(new() { ["CallOuts:AllowedHosts:0"] = "quotes.example.com", ["Engine:MaxAttempts"] = "1" });
        var name = Definitions.Unique("ssrf");
        await api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "probe", "type": "http", "method": "GET", "url": "'{{target.Address}}flaky'", "output": "reply" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var instance = await api.StartAsync(name);
        var faulted = await api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        Assert.Contains("calls to 127.0.0.1 are refused: the host is not in CallOuts:AllowedHosts", faulted.Error, StringComparison.Ordinal);
        Assert.Equal(0, target.FlakyCalls);
    }

    [Fact]
    public async Task Page_sizes_are_capped_and_a_long_poll_never_waits_longer_than_the_node_allows()
    {
        var (factory, api) = await StartServiceAsync(new() { ["Workers:MaxLongPoll"] = "00:00:01" });
        await api.PublishExampleAsync("signal-roundtrip.json");
        var instance = await api.StartAsync("signal-roundtrip");

        var lists = new[]
        {
            "/instances", "/tasks", "/dead-letters", "/signals", $"/instances/{instance.Id}/history", $"/instances/{instance.Id}/signals",
            "/definitions/signal-roundtrip",
        };
        foreach (var list in lists)
        {
            var problem = await ApiClient.ProblemAsync(await api.Http.GetAsync($"{list}?limit=501"), HttpStatusCode.BadRequest);
            Assert.Equal("limit must be between 1 and 500", (string?)problem["detail"]);
        }

        // Asked to wait an hour, the node answers after its own cap with the instance as it is (still waiting); the
        // client's 30 s timeout would end the test if it did not.
        using var client = factory.CreateClient();
        client.Timeout = TimeSpan.FromSeconds(30);
        var answered = await client.GetFromJsonAsync<InstanceView>($"/instances/{instance.Id}?waitFor=Completed&timeout=3600", WorkflowServiceFactory.Json);
        Assert.Equal(InstanceStatus.Waiting, answered!.Status);
    }

    private static HttpRequestMessage Preflight(string origin = "https://console.example.com")
    {
        var request = new HttpRequestMessage(HttpMethod.Options, "/instances");
        request.Headers.Add("Origin", origin);
        request.Headers.Add("Access-Control-Request-Method", "POST");
        return request;
    }

    private static HttpClient Client(WorkflowServiceFactory factory, TestApiKey key)
    {
        var client = factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        return client;
    }
}
