using System.Net;
using System.Text.Json.Nodes;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// Behind a reverse proxy the service takes the client's address and scheme from X-Forwarded-For and X-Forwarded-Proto
/// when the operator sets ASP.NET Core's standard ASPNETCORE_FORWARDEDHEADERS_ENABLED=true, run as the real process: the
/// rate limit then holds each client apart instead of putting everyone behind the proxy into one bucket, and the OpenAPI
/// document names the public scheme.
/// </summary>
public sealed class ForwardedHeadersTests
{
    private static async Task<ServiceProcess> StartAsync(bool forwardedHeaders)
    {
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-forwarded-").FullName, "workflow.db");
        var settings = new Dictionary<string, string?>
        {
            ["Store:ConnectionString"] = $"Data Source={database}",
            ["RateLimiting:PermitsPerPeriod"] = "2",
            ["RateLimiting:Burst"] = "2",
            ["RateLimiting:Period"] = "00:10:00",
        };
        if (forwardedHeaders)
        {
            settings["ASPNETCORE_FORWARDEDHEADERS_ENABLED"] = "true";
        }

        return await TestServiceProcess.StartAsync("forwarded", settings);
    }

    /// <summary>A request without credentials, as the proxy forwards it for the client at <paramref name="client"/>.</summary>
    private static async Task<HttpStatusCode> AnonymousAsync(HttpClient http, string client)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/definitions");
        request.Headers.Add("X-Forwarded-For", client);
        using var response = await http.SendAsync(request);
        return response.StatusCode;
    }

    [Fact]
    public async Task With_forwarded_headers_on_each_client_behind_the_proxy_has_its_own_rate_limit()
    {
        await using var node = await StartAsync(forwardedHeaders: true);
        using var proxy = new HttpClient { BaseAddress = node.Address };

        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "203.0.113.7"));
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "203.0.113.7"));
        Assert.Equal(HttpStatusCode.TooManyRequests, await AnonymousAsync(proxy, "203.0.113.7"));

        // Another client behind the same proxy is not held up by the first one's bucket.
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "198.51.100.20"));
        // IPv6 clients are counted per /64, the block one subscriber gets: another address of that block shares it.
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "2001:db8:1:2::10"));
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "2001:db8:1:2::11"));
        Assert.Equal(HttpStatusCode.TooManyRequests, await AnonymousAsync(proxy, "2001:db8:1:2:ffff::1"));
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(proxy, "2001:db8:1:3::10"));
    }

    [Fact]
    public async Task Without_forwarded_headers_a_client_cannot_pick_its_own_address()
    {
        await using var node = await StartAsync(forwardedHeaders: false);
        using var client = new HttpClient { BaseAddress = node.Address };

        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(client, "203.0.113.7"));
        Assert.Equal(HttpStatusCode.Unauthorized, await AnonymousAsync(client, "203.0.113.8"));
        // The header is not trusted: both requests came from this test's address, whose bucket is now empty.
        Assert.Equal(HttpStatusCode.TooManyRequests, await AnonymousAsync(client, "203.0.113.9"));
    }

    [Fact]
    public async Task With_forwarded_headers_on_the_api_document_names_the_public_scheme()
    {
        await using var node = await StartAsync(forwardedHeaders: true);
        using var client = node.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, "/openapi/v1.json");
        request.Headers.Add("X-Forwarded-Proto", "https");
        request.Headers.Add("X-Forwarded-For", "203.0.113.30");

        using var response = await client.SendAsync(request);
        var document = JsonNode.Parse(await response.Content.ReadAsStringAsync())!;

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.StartsWith("https://", (string?)document["servers"]![0]!["url"], StringComparison.Ordinal);
    }
}
