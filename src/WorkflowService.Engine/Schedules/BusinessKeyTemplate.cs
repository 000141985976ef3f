using System.Globalization;
using System.Text;

namespace WorkflowService.Engine.Schedules;

/// <summary>
/// The business key each occurrence of a schedule starts its instance with: text with placeholders {scheduleId},
/// {scheduleName} and {fireTime} (the occurrence's time in UTC, as yyyyMMddTHHmmssZ, or in a .NET date format given
/// after a colon, e.g. {fireTime:yyyy-MM-dd}). It must hold {fireTime}, so that each occurrence has a key of its own.
/// </summary>
public static class BusinessKeyTemplate
{
    public const string Default = "{scheduleName}-{fireTime}";
    public const string DefaultTimeFormat = "yyyyMMdd'T'HHmmss'Z'";

    /// <summary>The longest business key an instance keeps.</summary>
    public const int MaxKeyLength = 200;

    /// <summary>Why <paramref name="template"/> cannot be used; null when it can.</summary>
    public static string? Problem(string template, string scheduleName)
    {
        ArgumentNullException.ThrowIfNull(template);
        try
        {
            // The longest a key of it gets: a sample at a two-digit month and day.
            var sample = Render(template, Guid.Empty, scheduleName, new DateTime(2000, 12, 28, 23, 59, 59, DateTimeKind.Utc));
            if (!template.Contains("{fireTime", StringComparison.Ordinal))
            {
                return "must hold {fireTime} (or {fireTime:format}), so that each occurrence has a key of its own";
            }

            return sample.Length is 0 or > MaxKeyLength ? $"makes keys of {sample.Length} characters; a business key has 1 to {MaxKeyLength}"
                : !Events.CloudEventBody.IsAttributeText(sample) ? "makes keys with control characters or noncharacters; a business key has none"
                : null;
        }
        catch (FormatException e)
        {
            return e.Message;
        }
    }

    /// <summary>The key of the occurrence at <paramref name="fireTime"/>.</summary>
    /// <exception cref="FormatException">The template is not valid (checked by <see cref="Problem"/> before it is stored).</exception>
    public static string Render(string template, Guid scheduleId, string scheduleName, DateTime fireTime)
    {
        ArgumentNullException.ThrowIfNull(template);
        var key = new StringBuilder(template.Length + 32);
        var at = 0;
        while (at < template.Length)
        {
            var open = template.IndexOfAny(['{', '}'], at);
            if (open < 0)
            {
                key.Append(template, at, template.Length - at);
                break;
            }

            if (template[open] == '}')
            {
                throw new FormatException($"has a '}}' at position {open} that closes no placeholder");
            }

            var close = template.IndexOf('}', open);
            if (close < 0)
            {
                throw new FormatException($"has a '{{' at position {open} that is never closed");
            }

            key.Append(template, at, open - at);
            var placeholder = template[(open + 1)..close];
            var colon = placeholder.IndexOf(':', StringComparison.Ordinal);
            var (name, format) = colon < 0 ? (placeholder, null) : (placeholder[..colon], placeholder[(colon + 1)..]);
            key.Append(name switch
            {
                "scheduleId" when format is null => scheduleId.ToString(),
                "scheduleName" when format is null => scheduleName,
                "fireTime" => FormatTime(fireTime, format ?? DefaultTimeFormat),
                _ => throw new FormatException($"has an unknown placeholder {{{placeholder}}}: use {{scheduleId}}, {{scheduleName}}, {{fireTime}} or {{fireTime:format}}"),
            });
            at = close + 1;
        }

        return key.ToString();
    }

    private static string FormatTime(DateTime fireTime, string format)
    {
        // A one-letter format is a standard one (some of which are not what a key wants, but all are valid).
        var text = DateTime.SpecifyKind(fireTime, DateTimeKind.Utc).ToString(format, CultureInfo.InvariantCulture);
        return text.Length == 0 ? throw new FormatException("{fireTime:} needs a format after the colon") : text;
    }
}
