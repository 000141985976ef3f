using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Tests.Backends;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Base of the compliance suite: the real service on a fresh database of <typeparamref name="TBackend"/>. A backend is a
/// subclass of each suite, not a copy of it.
/// </summary>
public abstract class ServiceTest<TBackend> : IAsyncLifetime where TBackend : StoreBackend, new()
{
    private readonly List<IAsyncDisposable> _owned = [];

    protected TBackend Backend { get; } = new();
    protected WorkflowServiceFactory Factory { get; private set; } = null!;
    protected ApiClient Api { get; private set; } = null!;

    /// <summary>Settings this suite adds on top of the backend's.</summary>
    protected virtual Dictionary<string, string?> Settings => [];

    protected virtual void ConfigureServices(IServiceCollection services)
    {
    }

    public virtual async ValueTask InitializeAsync()
    {
        (Factory, Api) = await StartServiceAsync(Settings, ConfigureServices);
    }

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

    public async ValueTask DisposeAsync()
    {
        // Services first, then their databases.
        for (var i = _owned.Count - 1; i >= 0; i--)
        {
            await _owned[i].DisposeAsync();
        }

        GC.SuppressFinalize(this);
    }
}
