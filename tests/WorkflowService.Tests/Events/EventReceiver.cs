using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json.Nodes;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkflowService.Api;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Events;

/// <summary>
/// A business application's webhook receiver on loopback: it records every request it gets, and answers as its path
/// says: /ok/{name} 200; /flaky/{name}/{n} 503 for the first n attempts of each webhook-id, then 200; /gone/{name} 410;
/// /silent/{name} never answers (until the caller gives up).
/// </summary>
public sealed class EventReceiver : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly ConcurrentQueue<Received> _received = new();
    private readonly ConcurrentDictionary<string, int> _attempts = new();

    private EventReceiver(WebApplication app) => _app = app;

    public Uri Address { get; private set; } = null!;

    /// <summary>One request as it arrived: the route's name, the Standard Webhooks headers, the body, and what was answered.</summary>
    public sealed record Received(string Name, string Id, string Timestamp, string Signature, string ContentType, string Body, int Answered)
    {
        public JsonObject Event => JsonNode.Parse(Body)!.AsObject();

        /// <summary>The events it carried: the one of a structured request, or each of a batch (a JSON array), in order.</summary>
        public IReadOnlyList<JsonObject> Events => JsonNode.Parse(Body) is JsonArray batch ? [.. batch.Select(e => e!.AsObject())] : [Event];

        public string Type => (string)Event["type"]!;

        public string InstanceId => (string)Event["workflowinstanceid"]!;

        /// <summary>
        /// Whether one of the signatures verifies with <paramref name="secret"/>: the Standard Webhooks scheme, written here
        /// from its specification and not taken from the service.
        /// </summary>
        public bool SignedWith(string secret)
        {
            var key = Convert.FromBase64String(secret.StartsWith("whsec_", StringComparison.Ordinal) ? secret[6..] : secret);
            var expected = Convert.ToBase64String(HMACSHA256.HashData(key, Encoding.UTF8.GetBytes($"{Id}.{Timestamp}.{Body}")));
            return Signature.Split(' ').Any(s => s.StartsWith("v1,", StringComparison.Ordinal)
                && CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(s[3..]), Encoding.ASCII.GetBytes(expected)));
        }
    }

    /// <summary>Every request that reached <paramref name="name"/>, in arrival order.</summary>
    public IReadOnlyList<Received> Of(string name) => [.. _received.Where(r => r.Name == name)];

    public static async Task<EventReceiver> StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        var app = builder.Build();
        var receiver = new EventReceiver(app);
        app.MapPost("/ok/{name}", async (string name, HttpRequest request) => await receiver.RecordAsync(name, request, 200));
        app.MapPost("/gone/{name}", async (string name, HttpRequest request) => await receiver.RecordAsync(name, request, 410));
        app.MapPost("/flaky/{name}/{failures:int}", async (string name, int failures, HttpRequest request) =>
        {
            var attempt = receiver._attempts.AddOrUpdate($"{name}/{request.Headers["webhook-id"]}", 1, (_, n) => n + 1);
            return await receiver.RecordAsync(name, request, attempt <= failures ? 503 : 200);
        });
        app.MapPost("/silent/{name}", async (string name, HttpRequest request, CancellationToken cancellationToken) =>
        {
            await receiver.RecordAsync(name, request, 0);
            await Task.Delay(Timeout.Infinite, cancellationToken);
            return Results.Ok();
        });
        await app.StartAsync();
        receiver.Address = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
        return receiver;
    }

    /// <summary>
    /// Subscribes <paramref name="route"/> of this receiver, through the API, to <paramref name="events"/> (every one when
    /// null) of <paramref name="definition"/>; in batches of up to <paramref name="maxEventsPerBatch"/>, paused when
    /// <paramref name="enabled"/> is false.
    /// </summary>
    public async Task<SubscriptionWithSecretView> SubscribeAsync(ApiClient api, string route, string definition, string[]? events = null,
        int? maxEventsPerBatch = null, bool? enabled = null)
    {
        ArgumentNullException.ThrowIfNull(api);
        var token = Xunit.TestContext.Current.CancellationToken;
        using var response = await api.Http.PostAsJsonAsync("/subscriptions",
            new { name = Definitions.Unique("hooks"), endpoint = new Uri(Address, route).ToString(), events = events ?? ["*"], definitions = (string[])[definition],
                  maxEventsPerBatch, enabled },
            WorkflowServiceFactory.Json, token);
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync(token));
        return (await response.Content.ReadFromJsonAsync<SubscriptionWithSecretView>(WorkflowServiceFactory.Json, token))!;
    }

    private async Task<IResult> RecordAsync(string name, HttpRequest request, int status)
    {
        using var reader = new StreamReader(request.Body, Encoding.UTF8);
        var body = await reader.ReadToEndAsync();
        _received.Enqueue(new Received(name, request.Headers["webhook-id"].ToString(), request.Headers["webhook-timestamp"].ToString(),
            request.Headers["webhook-signature"].ToString(), request.ContentType ?? "", body, status));
        return Results.StatusCode(status);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
