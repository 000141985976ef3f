using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// The real service (HTTP pipeline, engine, signal workers) on a real store. Settings override appsettings.json the
/// way environment variables would; a test may swap services, e.g. the clock for a FakeTimeProvider.
/// </summary>
public sealed class WorkflowServiceFactory(Dictionary<string, string?> settings, Action<IServiceCollection>? services = null)
    : WebApplicationFactory<Program>
{
    public static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { Converters = { new JsonStringEnumConverter() } };

    private static readonly Dictionary<string, string?> TestDefaults = new()
    {
        ["Workers:PollInterval"] = "00:00:00.200",
        ["Serilog:MinimumLevel:Default"] = "Warning",
        // Suites drive thousands of requests from one client; the limiter's own tests (ResourceLimitTests) set theirs.
        ["RateLimiting:PermitsPerPeriod"] = "1000000",
        ["RateLimiting:Burst"] = "10000000",
    };

    public T Get<T>() where T : notnull => Services.GetRequiredService<T>();

    /// <summary>The settings this service runs with beyond appsettings.json (its database's among them), for a process on the same database.</summary>
    public IReadOnlyDictionary<string, string?> Settings => settings;

    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        foreach (var (key, value) in TestDefaults.Concat(settings))
        {
            builder.UseSetting(key, value);
        }

        if (services is not null)
        {
            builder.ConfigureTestServices(services);
        }
    }
}
