using System.Text.Json;

namespace WorkflowService.Api;

/// <summary>Converts between stored JSON text and the free-form JSON values of the API.</summary>
internal static class Json
{
    public static JsonElement? Element(string? json)
    {
        if (json is null)
        {
            return null;
        }

        using var document = JsonDocument.Parse(json);
        return document.RootElement.Clone();
    }

    public static string? Text(JsonElement? element) =>
        element is { ValueKind: not JsonValueKind.Undefined } e ? e.GetRawText() : null;
}
