using System.Globalization;
using System.Text.RegularExpressions;
using Jint.Runtime;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// Makes <c>Date.now()</c> and <c>new Date()</c> in expressions read the service's <see cref="TimeProvider"/>, in UTC,
/// and parses only date strings that name their own day: an expression gives the same value on every node and on every
/// day. Jint would otherwise fall back to .NET's lenient parsing, which fills what a string leaves out (<c>'10:00'</c>,
/// <c>'Jan 5'</c>) from the machine's clock, and reads <c>'2026-13-01'</c> as the 13th of January.
/// </summary>
internal sealed partial class ClockTimeSystem(TimeProvider time) : DefaultTimeSystem(TimeZoneInfo.Utc, CultureInfo.InvariantCulture)
{
    /// <summary>Longer strings are no date: a date string of any accepted form is far shorter.</summary>
    private const int MaxLength = 100;

    /// <summary>The largest time value ECMAScript has: 100,000,000 days either side of 1970.</summary>
    private const long MaxTimeValue = 8_640_000_000_000_000;

    /// <summary>
    /// Forms besides ISO 8601 that name their day, read exactly (the invariant culture's English names): what
    /// <c>toString</c>, <c>toDateString</c> and <c>toUTCString</c> give, RFC 2822, and <c>January 5, 2026</c>.
    /// </summary>
    private static readonly string[] NamedFormats =
    [
        "ddd MMM d yyyy HH:mm:ss 'GMT'zzz", "ddd MMM d yyyy", "ddd, d MMM yyyy HH:mm:ss 'GMT'",
        "ddd, d MMM yyyy HH:mm:ss zzz", "d MMM yyyy HH:mm:ss zzz", "ddd, d MMM yyyy HH:mm zzz", "d MMM yyyy",
        "MMMM d, yyyy", "MMM d, yyyy", "MMMM d, yyyy HH:mm:ss", "MMM d, yyyy HH:mm:ss", "MMM d yyyy",
    ];

    public override DateTimeOffset GetUtcNow() => time.GetUtcNow();

    public override bool TryParse(string date, out long epochMilliseconds)
    {
        epochMilliseconds = long.MinValue;
        if (date is null || date.Length > MaxLength)
        {
            return false;
        }

        var text = date.Trim();
        // toString ends with the zone's name in parentheses: informative only.
        var name = text.IndexOf('(', StringComparison.Ordinal);
        if (name > 0)
        {
            text = text[..name].TrimEnd();
        }

        return TryParseIso(text, out epochMilliseconds) || TryParseNamed(text, out epochMilliseconds);
    }

    /// <summary>
    /// ECMAScript's date time string format (<c>YYYY</c>, <c>YYYY-MM</c> or <c>YYYY-MM-DD</c>, then optionally
    /// <c>THH:mm</c>, <c>:ss</c>, <c>.sss</c> and <c>Z</c> or <c>±HH:mm</c>; a six-digit year with its sign), a space
    /// taken for the T. Without an offset the time is UTC, the service's time zone. Fields out of range are no date.
    /// </summary>
    internal static bool TryParseIso(string text, out long epochMilliseconds)
    {
        epochMilliseconds = long.MinValue;
        var match = Iso().Match(text);
        if (!match.Success)
        {
            return false;
        }

        var year = long.Parse(match.Groups["y"].ValueSpan, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        var month = Field(match, "mo", 1);
        var day = Field(match, "d", 1);
        var hour = Field(match, "h", 0);
        var minute = Field(match, "mi", 0);
        var second = Field(match, "s", 0);
        var fraction = match.Groups["f"];
        var millisecond = fraction.Success ? int.Parse((fraction.Value + "00").AsSpan(0, 3), CultureInfo.InvariantCulture) : 0;
        if ((match.Groups["y"].Value == "-000000") || month is < 1 or > 12 || day < 1 || day > DaysIn(year, month)
            || hour > 24 || minute > 59 || second > 59 || (hour == 24 && (minute | second | millisecond) != 0))
        {
            return false;
        }

        var offsetMinutes = 0;
        if (match.Groups["z"].Value is { Length: 6 } zone)
        {
            var offsetHours = int.Parse(zone.AsSpan(1, 2), CultureInfo.InvariantCulture);
            var offsetMins = int.Parse(zone.AsSpan(4, 2), CultureInfo.InvariantCulture);
            if (offsetHours > 23 || offsetMins > 59)
            {
                return false;
            }

            offsetMinutes = (zone[0] == '-' ? -1 : 1) * ((offsetHours * 60) + offsetMins);
        }

        var value = (DaysFromCivil(year, month, day) * 86_400_000L) + (hour * 3_600_000L) + (minute * 60_000L) + (second * 1_000L)
                    + millisecond - (offsetMinutes * 60_000L);
        if (Math.Abs(value) > MaxTimeValue)
        {
            return false;
        }

        epochMilliseconds = value;
        return true;
    }

    private static bool TryParseNamed(string text, out long epochMilliseconds)
    {
        epochMilliseconds = long.MinValue;
        // .NET writes an offset with a colon; toString and RFC 2822 write it without.
        var normalized = OffsetWithoutColon().Replace(text, "$1:$2");
        if (!DateTime.TryParseExact(normalized, NamedFormats, CultureInfo.InvariantCulture,
                DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var parsed))
        {
            return false;
        }

        epochMilliseconds = new DateTimeOffset(parsed, TimeSpan.Zero).ToUnixTimeMilliseconds();
        return true;
    }

    private static int Field(Match match, string group, int absent) =>
        match.Groups[group] is { Success: true } field ? int.Parse(field.ValueSpan, CultureInfo.InvariantCulture) : absent;

    private static int DaysIn(long year, int month) => month switch
    {
        2 => (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28,
        4 or 6 or 9 or 11 => 30,
        _ => 31,
    };

    /// <summary>Days from 1970-01-01 to a day of the proleptic Gregorian calendar, for any year (Howard Hinnant's algorithm).</summary>
    private static long DaysFromCivil(long year, int month, int day)
    {
        year -= month <= 2 ? 1 : 0;
        var era = (year >= 0 ? year : year - 399) / 400;
        var yearOfEra = year - (era * 400);
        var dayOfYear = ((153 * (month + (month > 2 ? -3 : 9))) + 2) / 5 + day - 1;
        var dayOfEra = (yearOfEra * 365) + (yearOfEra / 4) - (yearOfEra / 100) + dayOfYear;
        return (era * 146_097) + dayOfEra - 719_468;
    }

    [GeneratedRegex(@"^(?<y>[+-]\d{6}|\d{4})(?:-(?<mo>\d{2})(?:-(?<d>\d{2}))?)?(?:[T ](?<h>\d{2}):(?<mi>\d{2})(?::(?<s>\d{2})(?:\.(?<f>\d{1,9}))?)?(?<z>Z|[+-]\d{2}:\d{2})?)?$",
        RegexOptions.CultureInvariant | RegexOptions.ExplicitCapture)]
    private static partial Regex Iso();

    [GeneratedRegex(@"(?<=\s|GMT)([+-]\d{2})(\d{2})$", RegexOptions.CultureInvariant)]
    private static partial Regex OffsetWithoutColon();
}
