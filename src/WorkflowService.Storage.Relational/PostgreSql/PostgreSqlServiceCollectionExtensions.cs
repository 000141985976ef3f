using System.Diagnostics;
using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.Storage.Relational.PostgreSql;

public static class PostgreSqlServiceCollectionExtensions
{
    /// <summary>
    /// The PostgreSQL store, configured by <paramref name="section"/> (ConnectionString, MaxPoolSize,
    /// CommandTimeoutSeconds), checked at start-up: its connection pool, the claims' own small pool, and the store.
    /// </summary>
    public static IServiceCollection AddPostgreSqlWorkflowStore(this IServiceCollection services, IConfigurationSection section)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(section);
        services.AddStoreOptions<PostgreSqlStoreOptions>(section, "PostgreSql");
        // Npgsql's own spans (one per command) and metrics, where the host turns telemetry on; nothing otherwise.
        services.ConfigureOpenTelemetryTracerProvider(tracing => tracing.AddNpgsql());
        services.ConfigureOpenTelemetryMeterProvider(metrics => metrics.AddMeter("Npgsql"));
        services.AddSingleton(p => new NpgsqlDataSourceBuilder(Connection(p).ConnectionString)
            // A command is traced inside a traced operation only (a request, a run), never from the node's background loops
            // (idle polls, wake-up messages, the group-commit lanes, which serve many traces at once).
            .ConfigureTracing(tracing => tracing
                .ConfigureCommandFilter(_ => EngineTelemetry.TracesStoreCommands())
                .ConfigureBatchFilter(_ => EngineTelemetry.TracesStoreCommands()))
            .Build());
        services.AddSingleton(p => new PostgresClaimDataSource(
            new NpgsqlDataSourceBuilder(PostgresClaimDataSource.ConnectionString(Connection(p)))
                // The claim's own span (workflow.claim) covers its one statement.
                .ConfigureTracing(tracing => tracing.ConfigureCommandFilter(_ => false).ConfigureBatchFilter(_ => false))
                .Build()));
        services.AddSingleton<IStoreReplication>(p => new PostgresReplication(p.GetRequiredService<NpgsqlDataSource>(), p.GetRequiredService<ILogger<PostgresReplication>>()));
        services.AddSingleton(p => new PostgresReadServer(ReadConnection(p)!, p.GetServices<IInterceptor>(), p.GetRequiredService<RelationalWorkflowStore>()));
        services.AddKeyedSingleton<IOperatorQueries>(OperatorReads.MayBeStale, (p, _) => ReadConnection(p) is null
            ? p.GetRequiredService<RelationalWorkflowStore>()
            : p.GetRequiredService<PostgresReadServer>().Queries);
        services.AddHostedService(WatchCancelRequestThreads);
        services.AddPooledDbContextFactory<WorkflowDbContext>((provider, o) => o
            .UseNpgsql(provider.GetRequiredService<NpgsqlDataSource>(), npgsql => npgsql
                // Bounded retries of transient failures (dropped connections, failover); every wait is bounded.
                .EnableRetryOnFailure(maxRetryCount: 3, maxRetryDelay: TimeSpan.FromSeconds(2), errorCodesToAdd: null))
            .AddInterceptors(provider.GetServices<IInterceptor>())
            .ConfigureWarnings(RelationalStoreServices.QuietExpectedFailures));
        return services.AddRelationalStore<PostgreSqlDialect, PostgreSqlStoreOptions>(p => Connection(p).ConnectionString);
    }

    /// <summary>
    /// Wake-ups across nodes over LISTEN/NOTIFY on the PostgreSQL store's database (register the store too), with this
    /// node's own signals still waking it in process.
    /// </summary>
    public static IServiceCollection AddPostgresNotifyWakeUp(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        return services.AddBroadcastWakeUp<PostgresNotifyBus>();
    }

    /// <summary>
    /// The connections the node may cancel a command on (<see cref="CancelRequestThreads"/>): the store's pool, the claims'
    /// pool, the wake-up listener and the read-only server's pool.
    /// </summary>
    private static CancelRequestThreads WatchCancelRequestThreads(IServiceProvider provider)
    {
        var connection = Connection(provider);
        return new CancelRequestThreads(
            connection.MaxPoolSize + PostgresClaimDataSource.PoolSize(connection) + 1 + (ReadConnection(provider)?.MaxPoolSize ?? 0),
            provider.GetRequiredService<ILogger<CancelRequestThreads>>());
    }

    /// <summary>Store:ReadConnectionString tuned like the store's (pool size, timeouts), or null when reads stay on the store.</summary>
    private static NpgsqlConnectionStringBuilder? ReadConnection(IServiceProvider provider)
    {
        var store = provider.GetRequiredService<IOptions<PostgreSqlStoreOptions>>().Value;
        return string.IsNullOrWhiteSpace(store.ReadConnectionString)
            ? null
            : PostgreSqlConnectionTuning.Apply(new NpgsqlConnectionStringBuilder(store.ReadConnectionString), store);
    }

    /// <summary>The store's connection string, tuned for the store.</summary>
    private static NpgsqlConnectionStringBuilder Connection(IServiceProvider provider)
    {
        var store = provider.GetRequiredService<IOptions<PostgreSqlStoreOptions>>().Value;
        var lease = provider.GetService<IOptions<Engine.Runtime.WorkerOptions>>()?.Value.LeaseDuration;
        return PostgreSqlConnectionTuning.Apply(new NpgsqlConnectionStringBuilder(store.ConnectionString), store, lease);
    }
}
