using System.Diagnostics.CodeAnalysis;
using Testcontainers.Redis;
using WorkflowService.Benchmarks.Hosting;

namespace WorkflowService.Tests.Backends;

/// <summary>
/// The PostgreSQL store with Redis wake-ups. Redis is the server named by WORKFLOW_TESTS_REDIS (a StackExchange.Redis
/// configuration string), else one Testcontainers starts where a Docker engine answers, else a throwaway
/// <c>redis-server</c> from Debian's package on a free port (<see cref="OwnedRedisServer"/>), else the tests are skipped
/// with the reason (failed where CI requires "redis").
/// </summary>
public sealed class RedisWakeUpBackend : StoreBackend
{
    public const string Variable = "WORKFLOW_TESTS_REDIS";
    private static readonly SemaphoreSlim Gate = new(1, 1);
    private static string? _server;
    private static string? _unavailable;

    public override string Name => "redis";

    public override async Task<BackendDatabase> CreateDatabaseAsync()
    {
        var redis = await ServerAsync();
        if (redis is null)
        {
            Unavailable(_unavailable!);
        }

        var database = await new PostgresBackend().CreateDatabaseAsync();
        database.Settings["WakeUp:Transport"] = "Redis";
        database.Settings["WakeUp:Redis:ConnectionString"] = redis;
        // A channel of the test class's own: other classes' nodes on the same server are not its nodes.
        database.Settings["WakeUp:Redis:Channel"] = $"wf-test-{Guid.NewGuid():N}";
        return database;
    }

    /// <summary>The Redis configuration string, found once per test run.</summary>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Whatever stops Testcontainers or the local binary from starting Redis becomes the reason the Redis tests are reported unavailable.")]
    public static async Task<string?> ServerAsync()
    {
        await Gate.WaitAsync();
        try
        {
            if (_server is not null || _unavailable is not null)
            {
                return _server;
            }

            var configured = Environment.GetEnvironmentVariable(Variable);
            if (!string.IsNullOrWhiteSpace(configured))
            {
                return _server = configured;
            }

            if (File.Exists("/var/run/docker.sock") || Environment.GetEnvironmentVariable("DOCKER_HOST") is not null)
            {
                try
                {
                    var container = new RedisBuilder("redis:7").Build();
                    using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
                    await container.StartAsync(timeout.Token);
                    return _server = container.GetConnectionString();
                }
                catch (Exception e)
                {
                    _unavailable = $"{Variable} is not set and Testcontainers could not start Redis: {e.Message}";
                }
            }

            if (OwnedRedisServer.Unavailable() is { } missing)
            {
                _unavailable ??= $"{Variable} is not set, no Docker engine answers for Testcontainers, and no local server can be started: {missing}";
                return null;
            }

            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(1));
                var owned = await OwnedRedisServer.StartAsync(timeout.Token);
                AppDomain.CurrentDomain.ProcessExit += (_, _) => owned.DisposeAsync().AsTask().GetAwaiter().GetResult();
                _unavailable = null;
                return _server = owned.ConnectionString;
            }
            catch (Exception e)
            {
                _unavailable = $"{Variable} is not set and a local redis-server could not be started: {e.Message}";
                return null;
            }
        }
        finally
        {
            Gate.Release();
        }
    }
}
