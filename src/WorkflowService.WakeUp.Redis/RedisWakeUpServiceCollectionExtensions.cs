using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.WakeUp.Redis;

public static class RedisWakeUpServiceCollectionExtensions
{
    /// <summary>
    /// Wake-ups across nodes over Redis pub/sub, with any store, configured by <paramref name="wakeUpSection"/>'s
    /// "Redis" section (ConnectionString, Channel, ConnectTimeout), checked at start-up.
    /// </summary>
    public static IServiceCollection AddRedisWakeUp(this IServiceCollection services, IConfigurationSection wakeUpSection)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(wakeUpSection);
        var section = wakeUpSection.GetSection(RedisWakeUpOptions.Section);
        services.AddSingleton<IValidateOptions<RedisWakeUpOptions>>(new RedisWakeUpOptionsValidator(section.Path));
        services.AddSettings<RedisWakeUpOptions>(section);
        return services.AddBroadcastWakeUp<RedisWakeUpBus>();
    }
}
