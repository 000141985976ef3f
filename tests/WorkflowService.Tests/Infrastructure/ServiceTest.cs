using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Tests.Backends;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Base of the compliance suite: the real service on a fresh database of <typeparamref name="TBackend"/>, started for
/// each test. A backend is a subclass of each suite, not a copy of it. A suite whose tests can share one service per
/// class derives from <see cref="SharedServiceTest{TBackend}"/> instead.
/// </summary>
public abstract class ServiceTest<TBackend> : IAsyncLifetime where TBackend : StoreBackend, new()
{
    private readonly List<IAsyncDisposable> _owned = [];
    private WorkflowServiceFactory? _factory;
    private ApiClient? _api;

    protected TBackend Backend { get; } = new();

    /// <summary>The service this test runs on (unless the suite starts all its services itself).</summary>
    protected WorkflowServiceFactory Factory => _factory ?? throw NoDefaultService();

    /// <summary>The client of <see cref="Factory"/>.</summary>
    protected ApiClient Api => _api ?? throw NoDefaultService();

    /// <summary>Settings this suite adds on top of the backend's.</summary>
    protected virtual Dictionary<string, string?> Settings => [];

    /// <summary>
    /// False for a suite whose every test starts the services it needs with <see cref="StartServiceAsync"/>: then no
    /// service (and no database) is started for <see cref="Api"/> that no test would use.
    /// </summary>
    protected virtual bool UsesDefaultService => true;

    protected virtual void ConfigureServices(IServiceCollection services)
    {
    }

    public virtual async ValueTask InitializeAsync()
    {
        if (UsesDefaultService)
        {
            var (factory, api) = await StartServiceAsync(Settings, ConfigureServices);
            UseService(factory, api);
        }
    }

    /// <summary>Makes <paramref name="factory"/> the service of <see cref="Factory"/> and <see cref="Api"/>.</summary>
    private protected void UseService(WorkflowServiceFactory factory, ApiClient api) => (_factory, _api) = (factory, api);

    /// <summary>Starts another service instance on a database of its own (for tests that need their own settings).</summary>
    protected async Task<(WorkflowServiceFactory Factory, ApiClient Api)> StartServiceAsync(
        Dictionary<string, string?> settings, Action<IServiceCollection>? services = null, BackendDatabase? database = null)
    {
        database ??= await CreateDatabaseAsync();
        var factory = new WorkflowServiceFactory(database.Settings.Concat(settings).ToDictionary(), services);
        _owned.Add(factory);
        return (factory, new ApiClient(factory.CreateClient()));
    }

    /// <summary>A fresh database of this backend, dropped when the test ends.</summary>
    protected async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var database = await Backend.CreateDatabaseAsync();
        _owned.Add(database);
        return database;
    }

    /// <summary>Something the test started that must be stopped when it ends (in reverse order of registration).</summary>
    protected T Own<T>(T disposable) where T : IAsyncDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }

    /// <summary>A client of the test's service that signs in with this API key, disposed when the test ends.</summary>
    protected ApiClient WithApiKey(TestApiKey key)
    {
        var client = Factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        Own(new OwnedClient(client));
        return new ApiClient(client);
    }

    private sealed class OwnedClient(HttpClient client) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            client.Dispose();
            return ValueTask.CompletedTask;
        }
    }

    public async ValueTask DisposeAsync()
    {
        // Services first, then their databases.
        for (var i = _owned.Count - 1; i >= 0; i--)
        {
            await _owned[i].DisposeAsync();
        }

        GC.SuppressFinalize(this);
    }

    private InvalidOperationException NoDefaultService() => new(UsesDefaultService
        ? "the service is not started yet (InitializeAsync)"
        : $"{GetType().Name} starts the services its tests use (UsesDefaultService is false)");
}
