using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using MongoDB.Driver;
using WorkflowService.Engine;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Storage.MongoDb;

public static class MongoDbServiceCollectionExtensions
{
    /// <summary>
    /// The MongoDB store, configured by <paramref name="section"/> (ConnectionString, Database, the timeouts and limits of
    /// <see cref="MongoStoreOptions"/>), checked at start-up: one client (its connection pool) and the store.
    /// </summary>
    public static IServiceCollection AddMongoDbWorkflowStore(this IServiceCollection services, IConfigurationSection section)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(section);
        services.AddSingleton<IValidateOptions<MongoStoreOptions>>(new MongoStoreOptionsValidator(section.Path));
        services.AddSettings<MongoStoreOptions>(section);
        services.AddSingleton<IMongoClient>(p => new MongoClient(ClientSettings(p.GetRequiredService<IOptions<MongoStoreOptions>>().Value)));
        services.AddWorkflowStoreFacets<MongoWorkflowStore>();
        return services;
    }

    /// <summary>
    /// Wake-ups across nodes from a change stream on the MongoDB store's signals and instances (register the store too),
    /// with this node's own signals still waking it in process.
    /// </summary>
    public static IServiceCollection AddMongoChangeStreamWakeUp(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddSingleton<InProcessWakeUp>();
        services.AddSingleton<MongoChangeStreamWakeUp>();
        services.AddSingleton<IWakeUpTransport>(p => p.GetRequiredService<MongoChangeStreamWakeUp>());
        services.AddHostedService(p => p.GetRequiredService<MongoChangeStreamWakeUp>());
        return services;
    }

    /// <summary>The driver's settings: the connection string's, with the store's bounded waits and pool.</summary>
    internal static MongoClientSettings ClientSettings(MongoStoreOptions options)
    {
        var settings = MongoClientSettings.FromConnectionString(options.ConnectionString);
        settings.MaxConnectionPoolSize = options.MaxPoolSize;
        settings.ServerSelectionTimeout = options.ServerSelectionTimeout;
        settings.ConnectTimeout = options.ConnectTimeout;
        settings.SocketTimeout = options.SocketTimeout;
        // Retried once by the driver after a failover (the default, said here because the store relies on it: a claim or
        // a single-document write survives an election without the caller seeing it).
        settings.RetryWrites = true;
        settings.RetryReads = true;
        settings.ApplicationName ??= "workflow-service";
        return settings;
    }
}
