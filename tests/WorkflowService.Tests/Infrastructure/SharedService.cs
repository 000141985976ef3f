using WorkflowService.Tests.Backends;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// A class fixture: one service on one database of <typeparamref name="TBackend"/>, shared by the tests of one test class
/// (see <see cref="SharedServiceTest{TBackend}"/>) and stopped, its database dropped, when the class is done.
/// </summary>
/// <remarks>
/// The service starts when the class's first test starts, with that test's settings, rather than when xunit makes the
/// fixture: an unreachable backend then skips (or, where CI requires it, fails) each test with the reason, as it does for
/// a service of a test's own, instead of failing the fixture.
/// </remarks>
public sealed class SharedService<TBackend> : IAsyncDisposable where TBackend : StoreBackend, new()
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private BackendDatabase? _database;
    private WorkflowServiceFactory? _factory;
    private Dictionary<string, string?>? _settings;

    /// <summary>The class's service, started on the first call; every later call must ask for the same settings.</summary>
    public async Task<WorkflowServiceFactory> GetAsync(Dictionary<string, string?> settings)
    {
        await _gate.WaitAsync();
        try
        {
            if (_factory is not null)
            {
                if (!SameSettings(_settings!, settings))
                {
                    throw new InvalidOperationException(
                        "a test of this class asks for other settings than its shared service was started with; give it a service of its own ([OwnService])");
                }

                return _factory;
            }

            _database = await new TBackend().CreateDatabaseAsync();
            _settings = new Dictionary<string, string?>(settings);
            _factory = new WorkflowServiceFactory(_database.Settings.Concat(settings).ToDictionary());
            _ = _factory.Services; // starts the host now, inside the first test's set-up
            return _factory;
        }
        finally
        {
            _gate.Release();
        }
    }

    public async ValueTask DisposeAsync()
    {
        // The service first, then its database.
        if (_factory is not null)
        {
            await _factory.DisposeAsync();
        }

        if (_database is not null)
        {
            await _database.DisposeAsync();
        }

        _gate.Dispose();
    }

    private static bool SameSettings(Dictionary<string, string?> a, Dictionary<string, string?> b) =>
        a.Count == b.Count && a.All(pair => b.TryGetValue(pair.Key, out var value) && value == pair.Value);
}
