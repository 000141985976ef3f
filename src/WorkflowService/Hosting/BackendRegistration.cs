using System.Diagnostics;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Storage.Relational.Sqlite;
using WorkflowService.WakeUp.Redis;

namespace WorkflowService.Hosting;

/// <summary>
/// Picks the store and the wake-up transport by configuration; each registers itself and checks its own settings at
/// start-up. A wrong choice fails here, with the key and the allowed values.
/// </summary>
public static class BackendRegistration
{
    public static IServiceCollection AddWorkflowBackend(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configuration);
        var store = configuration.GetSection("Store");
        var wakeUp = configuration.GetSection("WakeUp");
        var provider = ConfigurationChoice.Read(store, "Provider", StoreProvider.Sqlite);
        var transport = ConfigurationChoice.Read(wakeUp, "Transport", WakeUpTransport.Auto);

        _ = provider switch
        {
            StoreProvider.Sqlite => services.AddSqliteWorkflowStore(store),
            StoreProvider.PostgreSql => services.AddPostgreSqlWorkflowStore(store),
            StoreProvider.MongoDb => services.AddMongoDbWorkflowStore(store),
            _ => throw new UnreachableException(),
        };
        // Runs before the wake-up listener and the signal workers (hosted services start in registration order).
        services.AddHostedService(p => ActivatorUtilities.CreateInstance<StoreInitializer>(p, provider));

        _ = (transport, provider) switch
        {
            (WakeUpTransport.Redis, _) => services.AddRedisWakeUp(wakeUp),
            (WakeUpTransport.Auto or WakeUpTransport.PostgresNotify, StoreProvider.PostgreSql) => services.AddPostgresNotifyWakeUp(),
            (WakeUpTransport.PostgresNotify, _) => throw ConfigurationChoice.Invalid(
                $"{wakeUp.Path}:Transport", $"{wakeUp.Path}:Transport 'PostgresNotify' needs {store.Path}:Provider 'PostgreSql' (it is '{provider}')."),
            (WakeUpTransport.Auto or WakeUpTransport.MongoChangeStream, StoreProvider.MongoDb) => services.AddMongoChangeStreamWakeUp(),
            (WakeUpTransport.MongoChangeStream, _) => throw ConfigurationChoice.Invalid(
                $"{wakeUp.Path}:Transport", $"{wakeUp.Path}:Transport 'MongoChangeStream' needs {store.Path}:Provider 'MongoDb' (it is '{provider}')."),
            _ => services.AddSingleton<IWakeUpTransport, InProcessWakeUp>(),
        };
        return services;
    }
}
