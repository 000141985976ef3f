using System.Diagnostics.CodeAnalysis;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// Where a backend's server comes from, found once per test run and in this order: the connection string in an
/// environment variable; else a container Testcontainers starts where a Docker engine answers; else a throwaway server
/// from this machine's binaries (where the backend has such a source), stopped when the test process ends; else the
/// reason none is there.
/// </summary>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "One per backend for the whole test run, held in a static field; its semaphore has no wait handle to release.")]
internal sealed class ServerSource(string variable, string what)
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private string? _server;

    /// <summary>Why there is no server (null while there is one, or before the first look).</summary>
    public string? Unavailable { get; private set; }

    /// <param name="container">Starts the container and returns its connection string.</param>
    /// <param name="ownedUnavailable">Why no throwaway server can be started here, or null.</param>
    /// <param name="owned">Starts the throwaway server: its connection string, and how to stop it.</param>
    public Task<string?> FindAsync(Func<CancellationToken, Task<string>> container, Func<string?> ownedUnavailable,
        Func<CancellationToken, Task<(string ConnectionString, IAsyncDisposable Server)>> owned) =>
        FindAsync(container, noServer: null, ownedUnavailable, owned);

    /// <summary>For a backend no binaries of this machine can start: the variable's server, else a container, else <paramref name="noServer"/>.</summary>
    public Task<string?> FindAsync(Func<CancellationToken, Task<string>> container, string noServer) =>
        FindAsync(container, noServer, ownedUnavailable: null, owned: null);

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Whatever stops Testcontainers or the local binaries from starting the server becomes the reason its tests are reported unavailable.")]
    private async Task<string?> FindAsync(Func<CancellationToken, Task<string>> container, string? noServer, Func<string?>? ownedUnavailable,
        Func<CancellationToken, Task<(string ConnectionString, IAsyncDisposable Server)>>? owned)
    {
        await _gate.WaitAsync();
        try
        {
            if (_server is not null || Unavailable is not null)
            {
                return _server;
            }

            var configured = Environment.GetEnvironmentVariable(variable);
            if (!string.IsNullOrWhiteSpace(configured))
            {
                return _server = configured;
            }

            if (File.Exists("/var/run/docker.sock") || Environment.GetEnvironmentVariable("DOCKER_HOST") is not null)
            {
                try
                {
                    using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
                    return _server = await container(timeout.Token);
                }
                catch (Exception e)
                {
                    Unavailable = $"{variable} is not set and Testcontainers could not start {what}: {e.Message}";
                }
            }

            if (owned is null || ownedUnavailable is null)
            {
                Unavailable ??= noServer;
                return null;
            }

            if (ownedUnavailable() is { } missing)
            {
                Unavailable ??= $"{variable} is not set, no Docker engine answers for Testcontainers, and no local server can be started: {missing}";
                return null;
            }

            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
                var (connectionString, server) = await owned(timeout.Token);
                AppDomain.CurrentDomain.ProcessExit += (_, _) => server.DisposeAsync().AsTask().GetAwaiter().GetResult();
                Unavailable = null;
                return _server = connectionString;
            }
            catch (Exception e)
            {
                Unavailable = $"{variable} is not set and a local {what} server could not be started: {e.Message}";
                return null;
            }
        }
        finally
        {
            _gate.Release();
        }
    }
}
