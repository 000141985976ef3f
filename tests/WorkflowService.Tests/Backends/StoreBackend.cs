using WorkflowService.Testing;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// A real store the tests run against. Each test class gets a database of its own; a backend that cannot be reached
/// skips its tests with the reason, unless CI listed it in WORKFLOW_TESTS_REQUIRE_BACKENDS, where that is a failure.
/// </summary>
public abstract class StoreBackend
{
    public const string RequireVariable = RequiredLists.Backends;

    /// <summary>The name CI uses in WORKFLOW_TESTS_REQUIRE_BACKENDS (sqlite, postgres, ...).</summary>
    public abstract string Name { get; }

    /// <summary>Creates an empty database and returns the service settings that point at it.</summary>
    public abstract Task<BackendDatabase> CreateDatabaseAsync();

    /// <summary>
    /// Ends the test as skipped with the reason, or as failed when CI requires this backend; also for a test that needs
    /// more of the backend than the suites' shared server (a server of its own to kill).
    /// </summary>
    public void Unavailable(string reason)
    {
        if (RequiredLists.Requires(RequireVariable, Name))
        {
            Assert.Fail($"{Name} is required here ({RequireVariable}) but unavailable: {reason}");
        }

        Assert.Skip($"{Name} unavailable: {reason}");
    }
}

/// <summary>One test class's database: its service settings, and how to drop it.</summary>
public sealed class BackendDatabase(Dictionary<string, string?> settings, Func<Task> drop) : IAsyncDisposable
{
    public Dictionary<string, string?> Settings { get; } = settings;

    public async ValueTask DisposeAsync() => await drop();
}
