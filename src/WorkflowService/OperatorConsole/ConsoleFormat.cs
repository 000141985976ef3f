using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace WorkflowService.OperatorConsole;

/// <summary>How the console writes values: JSON indented, times in UTC to the second.</summary>
public static class ConsoleFormat
{
    // Relaxed escaping: quotes and ampersands stay readable; the page's HTML encoding (Razor's) is what makes the text safe.
    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static string Json(string? json)
    {
        if (string.IsNullOrWhiteSpace(json))
        {
            return "";
        }

        try
        {
            return JsonNode.Parse(json)?.ToJsonString(Indented) ?? "null";
        }
        catch (JsonException)
        {
            return json;
        }
    }

    public static DateTime Utc(DateTime at) => at.Kind == DateTimeKind.Unspecified ? DateTime.SpecifyKind(at, DateTimeKind.Utc) : at.ToUniversalTime();

    public static string Iso(DateTime at) => Utc(at).ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);

    public static string Compact(DateTime at) => Utc(at).ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture);

    public static DateTime FromUnixMs(long ms) => DateTimeOffset.FromUnixTimeMilliseconds(ms).UtcDateTime;

    public static string Number(long n) => n.ToString("N0", CultureInfo.InvariantCulture);
}
