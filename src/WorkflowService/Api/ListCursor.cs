using System.Buffers.Text;
using System.Globalization;
using System.Text;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>
/// The lists' cursors (<c>next</c> in a page, <c>after</c> in the request): an item's place in its list's order, opaque
/// to clients (base64url), so that their form can change without breaking them. The instance list's is its creation time
/// and id; the others start with a letter of their own list (h history, s an instance's signals, v a definition's
/// versions, n a list by name, d a delivery log), so that one list refuses another's cursor.
/// </summary>
internal static class ListCursor
{
    public static string Encode(InstancePosition position) => Wrap(Position(position.CreatedAt, position.Id));

    /// <summary>The position a cursor names, or null when the text is not a cursor this service wrote.</summary>
    public static InstancePosition? Decode(string text) =>
        Unwrap(text) is { } plain && Position(plain) is var (at, id) ? new InstancePosition(at, id) : null;

    /// <summary>The cursor after a history event: its sequence number, which stays its own whatever the stored rows hold.</summary>
    public static string EncodeHistory(int sequence) => Wrap(string.Create(CultureInfo.InvariantCulture, $"h:{sequence}"));

    public static int? DecodeHistory(string text) => Number(Unwrap(text), "h:");

    public static string Encode(SignalPosition position) => Wrap("s:" + Position(position.CreatedAt, position.Id));

    public static SignalPosition? DecodeSignal(string text) =>
        Unwrap(text) is { } plain && plain.StartsWith("s:", StringComparison.Ordinal) && Position(plain[2..]) is var (at, id)
            ? new SignalPosition(at, id)
            : null;

    public static string EncodeVersion(int version) => Wrap(string.Create(CultureInfo.InvariantCulture, $"v:{version}"));

    public static int? DecodeVersion(string text) => Number(Unwrap(text), "v:");

    /// <summary>The cursor after a delivery in a subscription's log (newest first): its sequence.</summary>
    public static string EncodeDelivery(long sequence) => Wrap(string.Create(CultureInfo.InvariantCulture, $"d:{sequence}"));

    public static long? DecodeDelivery(string text) =>
        Unwrap(text) is { } plain && plain.StartsWith("d:", StringComparison.Ordinal)
        && long.TryParse(plain.AsSpan(2), NumberStyles.None, CultureInfo.InvariantCulture, out var sequence)
            ? sequence
            : null;

    /// <summary>The cursor after a name (a tenant's subscriptions, by name): UTF-8, as names may be any text.</summary>
    public static string EncodeName(string name) => Base64Url.EncodeToString(Encoding.UTF8.GetBytes("n:" + name));

    public static string? DecodeName(string text)
    {
        if (text.Length is 0 or > 600 || !Base64Url.IsValid(text))
        {
            return null;
        }

        var plain = Encoding.UTF8.GetString(Base64Url.DecodeFromChars(text));
        return plain.StartsWith("n:", StringComparison.Ordinal) ? plain[2..] : null;
    }

    /// <summary>
    /// The cursor after an instance in a list sorted by <paramref name="order"/>: the field and direction (so that another
    /// order refuses it), the instance's value of the field, and its id.
    /// </summary>
    public static string EncodeSorted(Engine.Search.Query.SearchOrder order, object? value, Guid id) =>
        Base64Url.EncodeToString(Encoding.UTF8.GetBytes($"o:{order.Field.Name}:{(order.Descending ? "d" : "a")}:{id:N}:{SortValue(value)}"));

    public static InstancePosition? DecodeSorted(string text, Engine.Search.Query.SearchOrder order)
    {
        if (text.Length is 0 or > 1000 || !Base64Url.IsValid(text))
        {
            return null;
        }

        var parts = Encoding.UTF8.GetString(Base64Url.DecodeFromChars(text)).Split(':', 5);
        if (parts is not ["o", var field, var direction, var idText, var valueText] || field != order.Field.Name
            || direction != (order.Descending ? "d" : "a") || !Guid.TryParseExact(idText, "N", out var id))
        {
            return null;
        }

        object? value = order.Field.Type switch
        {
            Engine.Search.Query.SearchValueType.Number => decimal.TryParse(valueText, NumberStyles.Float, CultureInfo.InvariantCulture, out var number) ? number : null,
            Engine.Search.Query.SearchValueType.DateTime => long.TryParse(valueText, NumberStyles.None, CultureInfo.InvariantCulture, out var ticks)
                && ticks <= DateTime.MaxValue.Ticks ? new DateTime(ticks, DateTimeKind.Utc) : null,
            Engine.Search.Query.SearchValueType.Bool => valueText switch { "true" => true, "false" => false, _ => null },
            _ => valueText,
        };
        return value switch
        {
            null => null,
            DateTime at when order.Field.BuiltIn => new InstancePosition(at, id),
            _ => new InstancePosition(default, id, value),
        };
    }

    private static string SortValue(object? value) => value switch
    {
        decimal number => number.ToString(CultureInfo.InvariantCulture),
        DateTime at => at.Ticks.ToString(CultureInfo.InvariantCulture),
        bool flag => flag ? "true" : "false",
        string text => text,
        _ => "",
    };

    private static string Wrap(string plain) => Base64Url.EncodeToString(Encoding.ASCII.GetBytes(plain));

    private static string? Unwrap(string text) =>
        text.Length is 0 or > 100 || !Base64Url.IsValid(text) ? null : Encoding.ASCII.GetString(Base64Url.DecodeFromChars(text));

    private static string Position(DateTime at, Guid id) => string.Create(CultureInfo.InvariantCulture, $"{at.Ticks}:{id:N}");

    private static (DateTime At, Guid Id)? Position(string plain)
    {
        var parts = plain.Split(':');
        return parts.Length == 2
               && long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks)
               && ticks is >= 0 and <= 3155378975999999999 // DateTime.MaxValue.Ticks
               && Guid.TryParseExact(parts[1], "N", out var id)
            ? (new DateTime(ticks, DateTimeKind.Utc), id)
            : null;
    }

    private static int? Number(string? plain, string prefix) =>
        plain is not null && plain.StartsWith(prefix, StringComparison.Ordinal)
        && int.TryParse(plain.AsSpan(prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var number)
            ? number
            : null;
}
