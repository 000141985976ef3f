using System.Net.Http.Json;
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// The real service (HTTP pipeline, engine, signal workers) on a real SQLite file of its own. Settings override
/// appsettings.json the way environment variables would; a test may swap the clock for a FakeTimeProvider.
/// </summary>
public sealed class WorkflowServiceFactory : WebApplicationFactory<Program>
{
    public static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { Converters = { new JsonStringEnumConverter() } };

    private readonly Dictionary<string, string?> _settings;
    private readonly Action<IServiceCollection>? _services;

    public WorkflowServiceFactory(Dictionary<string, string?>? settings = null, Action<IServiceCollection>? services = null)
    {
        DatabasePath = Path.Combine(Path.GetTempPath(), "workflow-tests", $"{Guid.NewGuid():N}.db");
        _settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "Sqlite",
            ["Store:ConnectionString"] = $"Data Source={DatabasePath}",
            ["Workers:PollInterval"] = "00:00:00.200",
            ["Serilog:MinimumLevel:Default"] = "Warning",
        };
        foreach (var (key, value) in settings ?? [])
        {
            _settings[key] = value;
        }

        _services = services;
    }

    public string DatabasePath { get; }

    public IWorkflowStore Store => Services.GetRequiredService<IWorkflowStore>();

    public T Get<T>() where T : notnull => Services.GetRequiredService<T>();

    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        foreach (var (key, value) in _settings)
        {
            builder.UseSetting(key, value);
        }

        if (_services is not null)
        {
            builder.ConfigureTestServices(_services);
        }
    }

    public override async ValueTask DisposeAsync()
    {
        await base.DisposeAsync();
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        foreach (var file in new[] { DatabasePath, DatabasePath + "-wal", DatabasePath + "-shm" })
        {
            File.Delete(file);
        }
    }
}
