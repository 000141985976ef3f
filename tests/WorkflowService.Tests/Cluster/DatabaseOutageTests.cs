using System.Net;
using System.Net.Http.Json;
using System.Text;
using WorkflowService.Benchmarks.Faults;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

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
        if (OwnedPostgresServer.Unavailable() is { } missing)
        {
            Unavailable(missing);
        }

        var ct = TestContext.Current.CancellationToken;
        await using var server = await OwnedPostgresServer.StartAsync(ct);
        var settings = new Dictionary<string, string?>(Limits)
        {
            ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = server.AdminConnectionString + ";Database=postgres",
        };
        await using var node = await ServiceProcess.StartAsync("outage-0", settings);
        // Longer than the request timeout: a call that is not answered by then has hung.
        using var client = node.CreateClient();
        client.Timeout = TimeSpan.FromSeconds(30);
        var definition = await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "signal-roundtrip.json"), ct);
        using (var publish = await client.PostAsync("/definitions", new StringContent(definition, Encoding.UTF8, "application/json"), ct))
        {
            Assert.Equal(HttpStatusCode.Created, publish.StatusCode);
        }

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

    /// <summary>Skips with the reason, or fails where CI requires PostgreSQL (WORKFLOW_TESTS_REQUIRE_BACKENDS).</summary>
    private static void Unavailable(string reason)
    {
        var required = (Environment.GetEnvironmentVariable(StoreBackend.RequireVariable) ?? string.Empty)
            .Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.False(required.Contains("postgres", StringComparer.OrdinalIgnoreCase), $"postgres is required here but no server can be owned: {reason}");
        Assert.Skip($"postgres server unavailable to own: {reason}");
    }
}
