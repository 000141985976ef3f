using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Configuration;

/// <summary>Options bound from one configuration section and checked at start-up with messages for operators.</summary>
public static class SettingsRegistration
{
    /// <summary>
    /// Binds <typeparamref name="TOptions"/> to <paramref name="section"/>, checked at start-up by
    /// <see cref="SettingsValidator{TOptions}"/>. A value that cannot be read is left out of the binding (the property
    /// keeps its default) and told as a failure, instead of ending the start with a conversion exception.
    /// </summary>
    public static OptionsBuilder<TOptions> AddSettings<TOptions>(this IServiceCollection services, IConfigurationSection section)
        where TOptions : class
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(section);
        services.AddSingleton<IValidateOptions<TOptions>>(new SettingsValidator<TOptions>(section));
        return services.AddOptions<TOptions>()
            .Configure(options => Readable(section, typeof(TOptions)).Bind(options))
            .ValidateOnStart();
    }

    /// <summary>The section without the values that cannot be read, keyed relative to it as Bind expects.</summary>
    private static IConfiguration Readable(IConfigurationSection section, Type type)
    {
        var unreadable = SettingValues.Unreadable(section, type);
        if (unreadable.Count == 0)
        {
            return section;
        }

        var bad = unreadable.Select(p => p.Key).ToHashSet(StringComparer.OrdinalIgnoreCase);
        var prefix = section.Path.Length + 1;
        var readable = section.AsEnumerable()
            .Where(pair => pair.Key.Length > section.Path.Length && !bad.Contains(pair.Key))
            .Select(pair => new KeyValuePair<string, string?>(pair.Key[prefix..], pair.Value));
        return new ConfigurationBuilder().AddInMemoryCollection(readable).Build();
    }
}
