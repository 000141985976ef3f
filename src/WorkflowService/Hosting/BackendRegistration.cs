using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.Relational;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Storage.Relational.Sqlite;

namespace WorkflowService.Hosting;

/// <summary>The one place that turns configuration into a store and a wake-up transport.</summary>
public static class BackendRegistration
{
    public static IServiceCollection AddWorkflowBackend(this IServiceCollection services, IConfiguration configuration)
    {
        var store = configuration.GetSection(StoreOptions.Section).Get<StoreOptions>() ?? new StoreOptions();
        var wakeUp = configuration.GetSection(WakeUpOptions.Section).Get<WakeUpOptions>() ?? new WakeUpOptions();
        services.AddSingleton(store);
        services.AddSingleton(wakeUp);

        if (string.IsNullOrWhiteSpace(store.ConnectionString))
        {
            throw new InvalidOperationException($"{StoreOptions.Section}:ConnectionString is empty; set it for the {store.Provider} store.");
        }

        if (store.MaxPoolSize is < 2 or > 1000)
        {
            throw new InvalidOperationException($"{StoreOptions.Section}:MaxPoolSize must be between 2 and 1000 (it is {store.MaxPoolSize}).");
        }

        string transport;
        switch (store.Provider.ToLowerInvariant())
        {
            case "sqlite":
                var synchronous = store.SqliteSynchronous.ToUpperInvariant();
                if (synchronous is not ("NORMAL" or "FULL" or "EXTRA"))
                {
                    throw new InvalidOperationException(
                        $"{StoreOptions.Section}:SqliteSynchronous '{store.SqliteSynchronous}' is not allowed; allowed values: NORMAL, FULL, EXTRA.");
                }

                services.AddSingleton<SqlDialect, SqliteDialect>();
                services.AddPooledDbContextFactory<WorkflowDbContext>((provider, o) => o
                    .UseSqlite(store.ConnectionString, sqlite => sqlite.CommandTimeout(store.CommandTimeoutSeconds))
                    .AddInterceptors(new SqlitePragmaInterceptor(synchronous))
                    .AddInterceptors(provider.GetServices<IInterceptor>())
                    .ConfigureWarnings(QuietExpectedFailures));
                transport = "inprocess";
                break;
            case "postgresql":
                var connection = new NpgsqlConnectionStringBuilder(store.ConnectionString)
                {
                    MaxPoolSize = store.MaxPoolSize,
                    CommandTimeout = store.CommandTimeoutSeconds,
                    // The store keeps no session state on pooled connections: skip the DISCARD ALL round trip on every return.
                    NoResetOnClose = true,
                };
                // The hot path repeats a handful of statements: let the server keep their plans (prepared per connection),
                // unless the connection string chose otherwise.
                if (connection.MaxAutoPrepare == 0)
                {
                    connection.MaxAutoPrepare = 32;
                    connection.AutoPrepareMinUsages = 2;
                }

                services.AddSingleton(_ => new NpgsqlDataSourceBuilder(connection.ConnectionString).Build());
                services.AddSingleton(_ => new PostgresClaimDataSource(
                    new NpgsqlDataSourceBuilder(PostgresClaimDataSource.ConnectionString(connection)).Build()));
                services.AddSingleton<SqlDialect, PostgreSqlDialect>();
                services.AddPooledDbContextFactory<WorkflowDbContext>((provider, o) => o
                    .UseNpgsql(provider.GetRequiredService<NpgsqlDataSource>(), npgsql => npgsql
                        // Bounded retries of transient failures (dropped connections, failover); every wait is bounded.
                        .EnableRetryOnFailure(maxRetryCount: 3, maxRetryDelay: TimeSpan.FromSeconds(2), errorCodesToAdd: null))
                    .AddInterceptors(provider.GetServices<IInterceptor>())
                    .ConfigureWarnings(QuietExpectedFailures));
                transport = "postgresnotify";
                break;
            default:
                throw new InvalidOperationException(
                    $"{StoreOptions.Section}:Provider '{store.Provider}' is not supported; allowed values: {string.Join(", ", StoreOptions.Providers)}.");
        }

        services.AddSingleton<IWorkflowStore, RelationalWorkflowStore>();
        // Runs before the wake-up listener and the signal workers (hosted services start in registration order).
        services.AddHostedService<StoreInitializer>();

        var chosen = wakeUp.Transport.ToLowerInvariant();
        switch (chosen == "auto" ? transport : chosen)
        {
            case "inprocess":
                services.AddSingleton<IWakeUpTransport, InProcessWakeUp>();
                break;
            case "postgresnotify" when transport == "postgresnotify":
                services.AddSingleton<InProcessWakeUp>();
                services.AddSingleton<PostgresWakeUp>();
                services.AddSingleton<IWakeUpTransport>(p => p.GetRequiredService<PostgresWakeUp>());
                services.AddHostedService(p => p.GetRequiredService<PostgresWakeUp>());
                break;
            case "postgresnotify":
                throw new InvalidOperationException(
                    $"{WakeUpOptions.Section}:Transport 'PostgresNotify' needs {StoreOptions.Section}:Provider 'PostgreSql' (it is '{store.Provider}').");
            default:
                throw new InvalidOperationException(
                    $"{WakeUpOptions.Section}:Transport '{wakeUp.Transport}' is not supported; allowed values: {string.Join(", ", WakeUpOptions.Transports)}.");
        }

        return services;
    }

    /// <summary>
    /// Unique-key and concurrency failures are expected outcomes (idempotent starts, lost races) that the store turns
    /// into domain results; EF Core would log each as an error. Unexpected failures still surface as exceptions.
    /// </summary>
    private static void QuietExpectedFailures(WarningsConfigurationBuilder warnings) => warnings.Log(
        (RelationalEventId.CommandError, LogLevel.Debug),
        (CoreEventId.SaveChangesFailed, LogLevel.Debug),
        (CoreEventId.OptimisticConcurrencyException, LogLevel.Debug));
}
