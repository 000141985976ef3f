using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.Engine;

public static class EngineServiceCollectionExtensions
{
    /// <summary>
    /// Registers <typeparamref name="TStore"/> (a singleton) as every facet of the store contract: one store serves them all.
    /// A store project calls it from its own registration.
    /// </summary>
    public static IServiceCollection AddWorkflowStoreFacets<TStore>(this IServiceCollection services)
        where TStore : class, IStoreClock, IStoreSchema, IDefinitionStore, IInstanceStore, ISignalQueue, ITaskStore, IOperatorQueries,
        IStoreFailures, IRetentionStore, IRevocationList, ISubscriptionStore, IDeliveryQueue, IScheduleStore, ISearchAttributeStore
    {
        services.AddSingleton<TStore>();
        services.AddSingleton<IStoreClock>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IStoreSchema>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IDefinitionStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IInstanceStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<ISignalQueue>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<ITaskStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IOperatorQueries>(p => p.GetRequiredService<TStore>());
        // Reads that may be stale go to the store too, unless the backend registers a read-only server for them.
        services.TryAddKeyedSingleton<IOperatorQueries>(OperatorReads.MayBeStale, (p, _) => p.GetRequiredService<TStore>());
        services.AddSingleton<IStoreFailures>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IRetentionStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IRevocationList>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<ISubscriptionStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IDeliveryQueue>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<IScheduleStore>(p => p.GetRequiredService<TStore>());
        services.AddSingleton<ISearchAttributeStore>(p => p.GetRequiredService<TStore>());
        return services;
    }

    /// <summary>Registers the engine (compiler, expressions, executor, runtime, signal workers). A store and a wake-up transport are registered separately.</summary>
    public static IServiceCollection AddWorkflowEngine(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        services.AddSettings<EngineOptions>(configuration.GetSection(EngineOptions.Section));
        services.AddSettings<ExpressionOptions>(configuration.GetSection(ExpressionOptions.Section));
        services.AddSettings<WorkerOptions>(configuration.GetSection(WorkerOptions.Section));
        services.AddSettings<TelemetryOptions>(configuration.GetSection(TelemetryOptions.Section));
        services.AddSettings<RetentionOptions>(configuration.GetSection(RetentionOptions.Section));
        services.AddSettings<EventOptions>(configuration.GetSection(EventOptions.Section));
        services.AddSettings<Search.SearchOptions>(configuration.GetSection(Search.SearchOptions.Section));
        services.AddSettings<Search.Query.SearchQueryOptions>(configuration.GetSection($"{Search.SearchOptions.Section}:Query"));
        services.AddSingleton<SubscriptionRegistry>();
        services.AddSingleton<SubscriptionDirectory>();
        services.AddHostedService(p => p.GetRequiredService<SubscriptionDirectory>());
        services.AddSingleton<EventOutbox>();
        services.AddSingleton<DeliveryDoorbell>();
        services.AddSingleton<DeliveryHandOver>();
        services.AddSingleton<EventDispatcher>();
        services.AddHostedService(p => p.GetRequiredService<EventDispatcher>());
        services.TryAddSingleton(TimeProvider.System);
        services.AddMetrics();
        services.AddSingleton<ExpressionRuntime>();
        services.AddSingleton<DefinitionCompiler>();
        services.AddSingleton<WorkflowExecutor>();
        services.AddSingleton<DefinitionRegistry>();
        services.AddSingleton<Search.InstanceSearchValues>();
        services.AddSingleton<Search.RecentSearchValues>();
        services.AddSingleton<InstanceChangeFeed>();
        services.AddSingleton<EngineMetrics>();
        services.AddSingleton<NodeIdentity>();
        services.AddSingleton<WaitPointWriter>();
        services.AddSingleton<RecentInstances>();
        services.AddSingleton<SignalsOnArrival>();
        services.AddSingleton<InstanceStarter>();
        services.AddSingleton<WorkflowRuntime>();
        services.AddSingleton<TaskInbox>();
        services.AddSingleton<DeadLetterQueue>();
        services.AddSingleton<InstanceMigrator>();
        services.AddSingleton<SignalProcessor>();
        services.AddSingleton<LeaseKeeper>();
        services.AddHostedService<SignalDispatcher>();
        services.AddSingleton<InstanceChangeWatcher>();
        services.AddHostedService(p => p.GetRequiredService<InstanceChangeWatcher>());
        services.AddHostedService<StoreCountGauges>();
        services.AddSingleton<RetentionPurge>();
        services.AddHostedService<RetentionJob>();
        services.AddSettings<ScheduleOptions>(configuration.GetSection(ScheduleOptions.Section));
        services.AddSingleton<ScheduleDoorbell>();
        services.AddSingleton<OccurrenceStarter>();
        services.AddSingleton<ScheduleRegistry>();
        services.AddSingleton<ScheduleRunner>();
        services.AddHostedService(p => p.GetRequiredService<ScheduleRunner>());
        return services;
    }
}
