using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Providers.WakeUp;

public static class WakeUpServiceCollectionExtensions
{
    /// <summary>
    /// Wake-ups across nodes over the bus <typeparamref name="TBus"/> (registered here as a singleton), with this node's
    /// own hints still waking it in process: <see cref="BroadcastWakeUp"/> as the node's <see cref="IWakeUpTransport"/>.
    /// </summary>
    public static IServiceCollection AddBroadcastWakeUp<TBus>(this IServiceCollection services) where TBus : class, IWakeUpBus
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddSingleton<InProcessWakeUp>();
        services.AddSingleton<TBus>();
        services.AddSingleton<IWakeUpBus>(p => p.GetRequiredService<TBus>());
        services.AddSingleton<BroadcastWakeUp>();
        services.AddSingleton<IWakeUpTransport>(p => p.GetRequiredService<BroadcastWakeUp>());
        services.AddHostedService(p => p.GetRequiredService<BroadcastWakeUp>());
        return services;
    }
}
