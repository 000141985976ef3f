using System.Buffers.Text;
using System.Globalization;
using System.Text;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>
/// The instance list's cursor (<c>next</c> in a page, <c>after</c> in the request): an instance's place in the list's
/// order, opaque to clients (base64url), so that its form can change without breaking them.
/// </summary>
internal static class ListCursor
{
    public static string Encode(InstancePosition position) =>
        Base64Url.EncodeToString(Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"{position.CreatedAt.Ticks}:{position.Id:N}")));

    /// <summary>The position a cursor names, or null when the text is not a cursor this service wrote.</summary>
    public static InstancePosition? Decode(string text)
    {
        if (text.Length is 0 or > 100 || !Base64Url.IsValid(text))
        {
            return null;
        }

        var parts = Encoding.ASCII.GetString(Base64Url.DecodeFromChars(text)).Split(':');
        return parts.Length == 2
               && long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks)
               && ticks is >= 0 and <= 3155378975999999999 // DateTime.MaxValue.Ticks
               && Guid.TryParseExact(parts[1], "N", out var id)
            ? new InstancePosition(new DateTime(ticks, DateTimeKind.Utc), id)
            : null;
    }
}
