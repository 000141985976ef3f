using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.Relational;
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
                    .UseSqlite(store.ConnectionString)
                    .AddInterceptors(new SqlitePragmaInterceptor(synchronous))
                    .AddInterceptors(provider.GetServices<IInterceptor>())
                    .ConfigureWarnings(QuietExpectedFailures));
                break;
            default:
                throw new InvalidOperationException(
                    $"{StoreOptions.Section}:Provider '{store.Provider}' is not supported; allowed values: {string.Join(", ", StoreOptions.Providers)}.");
        }

        services.AddSingleton<IWorkflowStore, RelationalWorkflowStore>();

        switch (wakeUp.Transport.ToLowerInvariant())
        {
            case "inprocess":
                services.AddSingleton<IWakeUpTransport, InProcessWakeUp>();
                break;
            default:
                throw new InvalidOperationException(
                    $"{WakeUpOptions.Section}:Transport '{wakeUp.Transport}' is not supported; allowed values: {string.Join(", ", WakeUpOptions.Transports)}.");
        }

        // Runs before the signal workers start (hosted services start in registration order).
        services.AddHostedService<StoreInitializer>();
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
