using System.ComponentModel;
using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Reflection;
using Microsoft.Extensions.Configuration;

namespace WorkflowService.Engine.Configuration;

/// <summary>
/// The values of a configuration section that its options class cannot take (a word where a number goes, a duration
/// that is not one), found before binding, which would otherwise fail with a conversion exception and a stack trace.
/// Each is told with the key as an operator writes it, the value unless it may be a secret, and what is expected.
/// </summary>
public static class SettingValues
{
    /// <summary>The keys under <paramref name="section"/> whose values do not convert to their property on <paramref name="type"/>.</summary>
    public static IReadOnlyList<UnreadableSetting> Unreadable(IConfigurationSection section, Type type)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(type);
        var problems = new List<UnreadableSetting>();
        Walk(section, type, null, problems);
        return problems;
    }

    /// <summary>What <paramref name="type"/> takes, for a message; <paramref name="property"/> adds its range when it has one.</summary>
    public static string Expected(Type type, PropertyInfo? property)
    {
        ArgumentNullException.ThrowIfNull(type);
        type = Nullable.GetUnderlyingType(type) ?? type;
        var range = property?.GetCustomAttribute<RangeAttribute>() is { } r ? $" {RangeText(r)}" : string.Empty;
        return type switch
        {
            _ when type == typeof(bool) => "true or false",
            _ when type.IsEnum => $"one of {string.Join(", ", Enum.GetNames(type))}",
            _ when type == typeof(TimeSpan) => $"a duration as [d.]hh:mm:ss[.fff] (00:00:30 is 30 seconds){range}",
            _ when type == typeof(int) || type == typeof(long) || type == typeof(short) || type == typeof(byte)
                   || type == typeof(uint) || type == typeof(ulong) || type == typeof(ushort) => $"a whole number{range}",
            _ when type == typeof(double) || type == typeof(float) || type == typeof(decimal) => $"a number{range}",
            _ when type == typeof(Uri) => "an absolute URL",
            _ => "a value of the right form",
        };
    }

    /// <summary>"between 1 and 256", or "at least 1024" when the maximum is only the type's own.</summary>
    public static string RangeText(RangeAttribute range)
    {
        ArgumentNullException.ThrowIfNull(range);
        return range.Maximum is int.MaxValue or long.MaxValue or >= 9.2e18
            ? $"at least {Format(range.Minimum)}"
            : $"between {Format(range.Minimum)} and {Format(range.Maximum)}";
    }

    /// <summary>Whether the value of <paramref name="key"/> may be a secret and must not be repeated in a message.</summary>
    public static bool MayBeSecret(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        // Any segment, so that the items of a list of keys (ApiKeys:0) are covered too; hiding a harmless value costs little.
        string[] words = ["ConnectionString", "Password", "Secret", "Token", "Hash", "Key"];
        return key.Split(':').Any(segment => words.Any(w => segment.Contains(w, StringComparison.OrdinalIgnoreCase)));
    }

    // Follows ConfigurationBinder: a value converts with the type's TypeConverter; collections and dictionaries bind their
    // children to the element type; other classes bind children to public properties by name, in any case, and ignore
    // keys that name no property.
    private static void Walk(IConfigurationSection section, Type declared, PropertyInfo? property, List<UnreadableSetting> problems)
    {
        // The converter of the declared type, as the binder uses: a nullable one reads an empty value as null.
        var converter = TypeDescriptor.GetConverter(declared);
        var type = Nullable.GetUnderlyingType(declared) ?? declared;
        if (type == typeof(string) || type == typeof(object))
        {
            return;
        }

        if (converter.CanConvertFrom(typeof(string)))
        {
            if (section.Value is { } value && !Converts(converter, value))
            {
                problems.Add(new UnreadableSetting(section.Path, value, Expected(type, property)));
            }

            return;
        }

        if (ElementType(type) is { } element)
        {
            foreach (var child in section.GetChildren())
            {
                Walk(child, element, null, problems);
            }

            return;
        }

        if (!type.IsClass || type.IsAbstract && !type.IsInterface)
        {
            return;
        }

        foreach (var child in section.GetChildren())
        {
            var target = type.GetProperty(child.Key, BindingFlags.Public | BindingFlags.Instance | BindingFlags.IgnoreCase);
            if (target is not null && target.GetIndexParameters().Length == 0)
            {
                Walk(child, target.PropertyType, target, problems);
            }
        }
    }

    private static bool Converts(TypeConverter converter, string value)
    {
        try
        {
            converter.ConvertFromInvariantString(value);
            return true;
        }
        catch (Exception e) when (e is FormatException or ArgumentException or NotSupportedException or OverflowException)
        {
            return false;
        }
    }

    /// <summary>The value type of a dictionary or the element type of an array or collection; null for other types.</summary>
    private static Type? ElementType(Type type)
    {
        if (type.IsArray)
        {
            return type.GetElementType();
        }

        var dictionary = type.IsGenericType && type.GetGenericTypeDefinition() == typeof(IDictionary<,>)
            ? type
            : type.GetInterfaces().FirstOrDefault(i => i.IsGenericType && i.GetGenericTypeDefinition() == typeof(IDictionary<,>));
        if (dictionary is not null)
        {
            return dictionary.GetGenericArguments()[1];
        }

        var enumerable = type.IsGenericType && type.GetGenericTypeDefinition() == typeof(IEnumerable<>)
            ? type
            : type.GetInterfaces().FirstOrDefault(i => i.IsGenericType && i.GetGenericTypeDefinition() == typeof(IEnumerable<>));
        return enumerable?.GetGenericArguments()[0];
    }

    private static string Duration(TimeSpan value)
    {
        // Milliseconds as appsettings.json writes them (00:00:00.100), not seven digits (00:00:00.1000000); the dot of
        // "1.00:00:00" separates days and is left alone.
        var text = value.ToString("c", CultureInfo.InvariantCulture);
        var dot = text.LastIndexOf('.');
        if (dot < text.LastIndexOf(':'))
        {
            return text;
        }

        var keep = dot + 4;
        while (text.Length > keep && text[^1] == '0')
        {
            text = text[..^1];
        }

        return text;
    }

    internal static string Format(object? value) => value switch
    {
        // 00:00:00.001 as written in appsettings.json, not the constant format's 00:00:00.0010000.
        TimeSpan t => Duration(t),
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        null => "empty",
        _ => value.ToString() ?? string.Empty,
    };
}
