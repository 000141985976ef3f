using System.Net;
using System.Net.Http.Json;
using System.Text;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The database goes away under a running node, on a PostgreSQL server the test owns (its own data directory and port):
/// stopped, then paused. The node stays up, tells callers 503 with Retry-After instead of hanging, reports Unhealthy, and
/// serves again once the database is back. (The fault runner's database-outage row does the same under load.)
/// </summary>
public sealed class DatabaseOutageTests
{
    private static readonly Dictionary<string, string?> Limits = new()
    {
        ["Store:CommandTimeoutSeconds"] = "2",
        ["Api:RequestTimeout"] = "00:00:04",
        ["Health:StoreTimeout"] = "00:00:01",
    };

    [Fact]
    public async Task A_stopped_or_paused_database_is_answered_503_with_retry_after_and_unready_until_it_is_back()
    {
        var ct = TestContext.Current.CancellationToken;
        await using var server = await StartServerAsync(ct);
        await using var node = await StartNodeAsync(server, "outage-0", Limits, ct);
        // Longer than the request timeout: a call that is not answered by then has hung.
        using var client = node.CreateClient();
        client.Timeout = TimeSpan.FromSeconds(30);

        await server.StopAsync(ct);
        await AssertUnavailableAsync(client, "stopped");
        await server.StartAgainAsync(ct);
        await AssertReadyAgainAsync(client);
        using (var started = await StartAsync(client, "after-stop"))
        {
            Assert.Equal(HttpStatusCode.Created, started.StatusCode);
        }

        server.Pause();
        try
        {
            await AssertUnavailableAsync(client, "paused");
        }
        finally
        {
            server.Resume();
        }

        await AssertReadyAgainAsync(client);
        using (var started = await StartAsync(client, "after-pause"))
        {
            Assert.Equal(HttpStatusCode.Created, started.StatusCode);
        }

        Assert.False(node.HasExited);
    }

    /// <summary>How many requests are sent at once, in each of two waves, while the database is frozen.</summary>
    private const int Wave = 24;

    [Fact]
    public async Task Every_request_sent_while_the_database_is_frozen_the_first_ones_too_is_answered_503_within_the_request_timeout()
    {
        // Issue #36: with the database paused, the first requests (those that found an open connection and sent a command)
        // had no answer after the request timeout and more: cancelling their commands, the driver sends the frozen server
        // a cancel request synchronously, and each held a thread-pool thread until its connect timeout passed.
        var ct = TestContext.Current.CancellationToken;
        await using var server = await StartServerAsync(ct);
        var requestTimeout = TimeSpan.FromSeconds(4);
        var limits = new Dictionary<string, string?>
        {
            // Over the request timeout: the request's deadline, not the command's, cancels what is in flight; the driver's
            // connect timeout, which bounds each cancel request to the frozen server, follows it (5 s).
            ["Store:CommandTimeoutSeconds"] = "5",
            ["Api:RequestTimeout"] = requestTimeout.ToString("c", System.Globalization.CultureInfo.InvariantCulture),
            ["Health:StoreTimeout"] = "00:00:01",
        };
        await using var node = await StartNodeAsync(server, "frozen-0", limits, ct);
        using var client = node.CreateClient();
        // The caller's own timeout: the request timeout and a margin. When it fires, the service held the request past it.
        client.Timeout = requestTimeout + TimeSpan.FromSeconds(3);

        // Connections opened and left idle in the pool, as under load: the first requests of the freeze run commands on them.
        await Task.WhenAll(Enumerable.Range(0, Wave).Select(i => UntilCreatedAsync(() => StartAsync(client, $"warm-{i}"), $"warm-up start {i}")));

        server.Pause();
        var answers = new List<string>();
        try
        {
            // The second wave goes out while the first one's cancel requests still wait on the frozen server.
            foreach (var wave in new[] { "first", "second" })
            {
                answers.AddRange(await Task.WhenAll(Enumerable.Range(0, Wave).Select(i => AskWhileFrozenAsync(client, $"{wave}-{i}", health: i % 4 == 0))));
            }
        }
        finally
        {
            server.Resume();
        }

        Assert.All(answers, answer => Assert.EndsWith(": 503", answer, StringComparison.Ordinal));
        await AssertReadyAgainAsync(client);
    }

    /// <summary>
    /// A readiness check or a start while the database is frozen, described as "what: status": 503 (a start's with
    /// Retry-After) is what must come; "no answer" when the client's own timeout fired first.
    /// </summary>
    private static async Task<string> AskWhileFrozenAsync(HttpClient client, string key, bool health)
    {
        var what = health ? $"GET /health/ready ({key})" : $"POST /instances ({key})";
        try
        {
            using var answer = health ? await client.GetAsync("/health/ready") : await StartAsync(client, key);
            var retryAfter = health || answer.Headers.RetryAfter is not null ? string.Empty : " without Retry-After";
            return $"{what}: {(int)answer.StatusCode}{retryAfter}";
        }
        catch (TaskCanceledException e) when (e.InnerException is TimeoutException)
        {
            return $"{what}: no answer within {client.Timeout.TotalSeconds:0} s";
        }
    }

    /// <summary>A start is answered 503 problem details with Retry-After and nothing of the store's internals; readiness fails.</summary>
    private static async Task AssertUnavailableAsync(HttpClient client, string how)
    {
        using var refused = await StartAsync(client, $"while-{how}");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.NotNull(refused.Headers.RetryAfter);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        var body = await refused.Content.ReadAsStringAsync();
        Assert.Contains("Idempotency-Key", body, StringComparison.Ordinal);
        Assert.DoesNotContain("Npgsql", body, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("   at ", body, StringComparison.Ordinal);
        await Eventually.WaitUntilAsync(async () =>
        {
            using var ready = await client.GetAsync("/health/ready");
            return ready.StatusCode == HttpStatusCode.ServiceUnavailable;
        }, TimeSpan.FromSeconds(30), $"readiness to fail while the database is {how}");
    }

    private static Task AssertReadyAgainAsync(HttpClient client) => Eventually.WaitUntilAsync(async () =>
    {
        using var ready = await client.GetAsync("/health/ready");
        return ready.IsSuccessStatusCode;
    }, TimeSpan.FromSeconds(15), "readiness within 15 s of the database's return");

    private static Task<HttpResponseMessage> StartAsync(HttpClient client, string key)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, "/instances") { Content = JsonContent.Create(new { definition = "signal-roundtrip" }) };
        request.Headers.Add("Idempotency-Key", key);
        return client.SendAsync(request);
    }

    /// <summary>A PostgreSQL server of the test's own, started; skips (or fails where CI requires PostgreSQL) without one.</summary>
    private static Task<OwnedPostgresServer> StartServerAsync(CancellationToken ct)
    {
        if (OwnedPostgresServer.Unavailable() is { } missing)
        {
            Unavailable(missing);
        }

        return OwnedPostgresServer.StartAsync(ct);
    }

    /// <summary>A node on <paramref name="server"/> with <paramref name="limits"/>, the example definition published.</summary>
    private static async Task<ServiceProcess> StartNodeAsync(OwnedPostgresServer server, string nodeId,
        IReadOnlyDictionary<string, string?> limits, CancellationToken ct)
    {
        var settings = new Dictionary<string, string?>(limits)
        {
            ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = server.AdminConnectionString + ";Database=postgres",
        };
        var node = await TestServiceProcess.StartAsync(nodeId, settings);
        try
        {
            using var client = node.CreateClient();
            var definition = await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "signal-roundtrip.json"), ct);
            await UntilCreatedAsync(() => client.PostAsync("/definitions", new StringContent(definition, Encoding.UTF8, "application/json"), ct), "publishing the definition");
            return node;
        }
        catch
        {
            await node.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// Sends until the answer is 201 (at most 60 s): with these short limits a loaded machine may answer 503 with Retry-After
    /// before the outage, which asks the caller to repeat (a start repeats with its Idempotency-Key; a publish makes a version).
    /// </summary>
    private static Task UntilCreatedAsync(Func<Task<HttpResponseMessage>> send, string what) => Eventually.WaitUntilAsync(async () =>
    {
        using var answer = await send();
        return answer.StatusCode == HttpStatusCode.Created;
    }, TimeSpan.FromSeconds(60), $"{what} answered 201");

    /// <summary>Skips with the reason, or fails where CI requires PostgreSQL (WORKFLOW_TESTS_REQUIRE_BACKENDS).</summary>
    private static void Unavailable(string reason)
    {
        var required = (Environment.GetEnvironmentVariable(StoreBackend.RequireVariable) ?? string.Empty)
            .Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.False(required.Contains("postgres", StringComparer.OrdinalIgnoreCase), $"postgres is required here but no server can be owned: {reason}");
        Assert.Skip($"postgres server unavailable to own: {reason}");
    }
}
