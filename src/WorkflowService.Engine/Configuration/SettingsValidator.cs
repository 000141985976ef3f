using System.ComponentModel.DataAnnotations;
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Configuration;

/// <summary>
/// Checks an options class bound from one configuration section: values that cannot be read, then the data annotations
/// of its properties, each told with its key as an operator writes it (Workers:LeaseDuration), never a C# class name.
/// </summary>
public sealed class SettingsValidator<TOptions>(IConfigurationSection section) : IValidateOptions<TOptions> where TOptions : class
{
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = SettingValues.Unreadable(section, typeof(TOptions));
        var failures = problems.Select(p => p.Message).ToList();
        var unreadable = problems.Select(p => p.Key).ToHashSet(StringComparer.OrdinalIgnoreCase);
        foreach (var property in typeof(TOptions).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            var key = $"{section.Path}:{property.Name}";
            if (unreadable.Contains(key))
            {
                continue; // told above; the property kept its default
            }

            var value = property.GetValue(options);
            foreach (var attribute in property.GetCustomAttributes<ValidationAttribute>())
            {
                var context = new ValidationContext(options) { MemberName = property.Name, DisplayName = key };
                if (attribute.GetValidationResult(value, context) is { } result)
                {
                    failures.Add(attribute is RangeAttribute range
                        ? $"{key} must be {SettingValues.RangeText(range)} (it is {SettingValues.Format(value)})."
                        : result.ErrorMessage ?? $"{key} is not valid.");
                }
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
