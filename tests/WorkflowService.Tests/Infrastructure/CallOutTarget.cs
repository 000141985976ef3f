using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// A real HTTP server on loopback that http steps call: a quote service, a flaky one, a broken one, a slow one, one that
/// redirects, one that tells what headers it got and one that drips its body.
/// </summary>
public sealed class CallOutTarget : IAsyncDisposable
{
    private readonly WebApplication _app;
    private int _flakyCalls;
    private int _slowCalls;
    private int _redirectCalls;

    private CallOutTarget(WebApplication app) => _app = app;

    public Uri Address { get; private set; } = null!;

    /// <summary>How many requests /flaky has received.</summary>
    public int FlakyCalls => Volatile.Read(ref _flakyCalls);

    /// <summary>The W3C traceparent header of the last request /quote received (null: none yet, or it carried none).</summary>
    public string? LastQuoteTraceParent { get; private set; }

    /// <summary>How many requests /slow has received.</summary>
    public int SlowCalls => Volatile.Read(ref _slowCalls);

    /// <summary>How many requests /redirect has received.</summary>
    public int RedirectCalls => Volatile.Read(ref _redirectCalls);

    /// <param name="address">The loopback address to listen on (any of 127/8 on Linux).</param>
    public static async Task<CallOutTarget> StartAsync(string address = "127.0.0.1")
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls($"http://{address}:0");
        builder.Logging.ClearProviders();
        var app = builder.Build();
        var target = new CallOutTarget(app);
        app.MapPost("/quote", async (HttpRequest request) =>
        {
            target.LastQuoteTraceParent = request.Headers["traceparent"] is { Count: > 0 } traceParent ? traceParent.ToString() : null;
            var body = await request.ReadFromJsonAsync<Dictionary<string, int>>();
            return Results.Json(new { premium = body!["sum"] / 100, currency = request.Headers["X-Currency"].ToString() });
        });
        app.MapGet("/flaky", () => Interlocked.Increment(ref target._flakyCalls) <= 2
            ? Results.StatusCode(StatusCodes.Status503ServiceUnavailable)
            : Results.Text("ready", "text/plain"));
        // Answers after ms milliseconds: a handler slower than the service's lease.
        app.MapPost("/slow", async (int ms, CancellationToken cancellationToken) =>
        {
            Interlocked.Increment(ref target._slowCalls);
            await Task.Delay(ms, cancellationToken);
            return Results.Json(new { answered = true });
        });
        // What a call brought: the X-Api-Key header it carried (null: none), and its method.
        app.MapMethods("/headers", ["GET", "POST"], (HttpRequest request) => Results.Json(new
        {
            apiKey = request.Headers["X-Api-Key"] is { Count: > 0 } key ? key.ToString() : null,
            method = request.Method,
        }));
        app.MapGet("/broken", () => Results.StatusCode(StatusCodes.Status500InternalServerError));
        app.MapMethods("/redirect", ["GET", "POST"], (string to) =>
        {
            Interlocked.Increment(ref target._redirectCalls);
            return Results.Redirect(to);
        });
        // Sends its headers at once, then its body one byte a second for two minutes (or until the caller goes).
        app.MapGet("/drip", async (HttpResponse response, CancellationToken cancellationToken) =>
        {
            response.ContentType = "text/plain";
            await response.StartAsync(cancellationToken);
            using var second = new PeriodicTimer(TimeSpan.FromSeconds(1));
            for (var i = 0; i < 120 && await second.WaitForNextTickAsync(cancellationToken); i++)
            {
                await response.Body.WriteAsync("."u8.ToArray(), cancellationToken);
                await response.Body.FlushAsync(cancellationToken);
            }
        });
        await app.StartAsync();
        target.Address = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
        return target;
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
