using System.Globalization;
using System.Text.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// A schedule form's fields as typed. <see cref="ToSpec"/> reads them as the API would read its JSON; a field that is
/// not even of its kind (a number, a date, JSON) is told at the field's JSON path, as the API's checks are.
/// </summary>
public sealed record ScheduleForm(
    string? Name,
    string? Definition,
    string? Version,
    string? Input,
    string? Cron,
    string? TimeZone,
    string? IntervalSeconds,
    string? StartAt,
    string? EndAt,
    string? JitterSeconds,
    string? BusinessKey,
    string? OverlapPolicy,
    string? CatchUpPolicy,
    string? CatchUpWindowSeconds)
{
    public static readonly ScheduleForm Empty = new(null, null, null, null, null, null, null, null, null, null, null, null, null, null);

    /// <summary>How a time reads in the form: UTC, to the second (what a datetime-local field with step 1 sends back).</summary>
    public const string TimeFormat = "yyyy-MM-dd'T'HH:mm:ss";

    public static ScheduleForm Of(ScheduleView s) => new(s.Name, s.Definition, Text(s.Version), s.Input is { } input ? ConsoleFormat.Json(input.GetRawText()) : null,
        s.Cron, s.Cron is null ? null : s.TimeZone, Text(s.IntervalSeconds), Time(s.StartAt), Time(s.EndAt), Text(s.JitterSeconds), s.BusinessKey,
        s.OverlapPolicy.ToString(), s.CatchUpPolicy.ToString(), Text(s.CatchUpWindowSeconds));

    /// <summary>The spec the fields stand for, or the problems that keep them from standing for one (each at its field's JSON path).</summary>
    public (ScheduleSpec? Spec, IReadOnlyList<Diagnostic> Problems) ToSpec()
    {
        var problems = new List<Diagnostic>();
        var spec = new ScheduleSpec(Blank(Name), Blank(Definition), (int?)Whole(Version, "version", int.MaxValue, problems), InputJson(problems),
            Blank(Cron), Blank(TimeZone), Whole(IntervalSeconds, "intervalSeconds", long.MaxValue, problems), At(StartAt, "startAt", problems),
            At(EndAt, "endAt", problems), Whole(JitterSeconds, "jitterSeconds", long.MaxValue, problems), Blank(BusinessKey),
            Choice<ScheduleOverlap>(OverlapPolicy, "overlapPolicy", problems), Choice<ScheduleCatchUp>(CatchUpPolicy, "catchUpPolicy", problems),
            Whole(CatchUpWindowSeconds, "catchUpWindowSeconds", long.MaxValue, problems));
        return problems.Count == 0 ? (spec, problems) : (null, problems);
    }

    /// <summary>A time typed in the form (UTC), or null with a problem at <paramref name="field"/>'s path when it is not one.</summary>
    public static DateTime? At(string? text, string field, ICollection<Diagnostic> problems)
    {
        if (Blank(text) is not { } value)
        {
            return null;
        }

        string[] formats = ["yyyy-MM-dd'T'HH:mm", TimeFormat, "yyyy-MM-dd'T'HH:mm:ss.FFFFFFF", "yyyy-MM-dd'T'HH:mm:ssK", "yyyy-MM-dd'T'HH:mm:ss.FFFFFFFK"];
        if (DateTime.TryParseExact(value, formats, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var at))
        {
            return DateTime.SpecifyKind(at, DateTimeKind.Utc);
        }

        problems.Add(new($"$.{field}", $"{field} '{value}' is not a date and time in UTC such as 2027-01-01T02:30"));
        return null;
    }

    private string? InputJson(List<Diagnostic> problems)
    {
        if (Blank(Input) is not { } input)
        {
            return null;
        }

        try
        {
            using var document = JsonDocument.Parse(input);
            return document.RootElement.GetRawText();
        }
        catch (JsonException e)
        {
            problems.Add(new("$.input", $"input is not JSON (line {(e.LineNumber ?? 0) + 1}, position {(e.BytePositionInLine ?? 0) + 1})"));
            return null;
        }
    }

    private static long? Whole(string? text, string field, long max, List<Diagnostic> problems)
    {
        if (Blank(text) is not { } value)
        {
            return null;
        }

        if (long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number) && number <= max && number >= -max)
        {
            return number;
        }

        problems.Add(new($"$.{field}", $"{field} must be a whole number (it is '{value}')"));
        return null;
    }

    private static T? Choice<T>(string? text, string field, List<Diagnostic> problems) where T : struct, Enum
    {
        if (Blank(text) is not { } value)
        {
            return null;
        }

        if (Enum.TryParse<T>(value, ignoreCase: true, out var chosen) && !char.IsAsciiDigit(value[0]) && value[0] != '-')
        {
            return chosen;
        }

        problems.Add(new($"$.{field}", $"{field} must be one of {string.Join(", ", Enum.GetNames<T>())} (it is '{value}')"));
        return null;
    }

    private static string? Blank(string? value) => string.IsNullOrWhiteSpace(value) ? null : value.Trim();

    private static string? Text(long? value) => value?.ToString(CultureInfo.InvariantCulture);

    private static string? Time(DateTime? at) => at is { } value ? ConsoleFormat.Utc(value).ToString(TimeFormat, CultureInfo.InvariantCulture) : null;
}
