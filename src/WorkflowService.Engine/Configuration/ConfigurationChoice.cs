using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Configuration;

/// <summary>
/// A setting that takes one of a fixed set of names (an enum's), in any case. A wrong value fails with a message for
/// operators: the key, the value and the allowed values, no type names.
/// </summary>
public static class ConfigurationChoice
{
    /// <summary>The value of <paramref name="key"/> under <paramref name="section"/>; <paramref name="fallback"/> when it is not set.</summary>
    /// <exception cref="OptionsValidationException">The value names none of <typeparamref name="TEnum"/>'s members.</exception>
    public static TEnum Read<TEnum>(IConfigurationSection section, string key, TEnum fallback) where TEnum : struct, Enum
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentException.ThrowIfNullOrEmpty(key);
        var value = section[key];
        if (value is null)
        {
            return fallback;
        }

        // By name only: Enum.TryParse would also take numbers and comma-separated lists.
        var name = Enum.GetNames<TEnum>().FirstOrDefault(n => string.Equals(n, value.Trim(), StringComparison.OrdinalIgnoreCase));
        return name is not null
            ? Enum.Parse<TEnum>(name)
            : throw Invalid($"{section.Path}:{key}", $"{section.Path}:{key} '{value}' is not supported; allowed values: {string.Join(", ", Enum.GetNames<TEnum>())}.");
    }

    /// <summary>A start-up failure about the setting <paramref name="key"/>, told by <paramref name="message"/>.</summary>
    public static OptionsValidationException Invalid(string key, string message) => new(key, typeof(string), [message]);
}
