using Cronos;

namespace WorkflowService.Engine.Schedules;

/// <summary>
/// When a schedule's occurrences fall, in Unix milliseconds: a cron expression read in its time zone (Cronos decides
/// daylight-saving gaps and overlaps: a time the clock skips runs once just after the gap; a time the clock passes twice
/// runs once, at its first pass, unless the expression names every hour or minute) or a fixed interval from its anchor,
/// within its optional start and end.
/// </summary>
public sealed class ScheduleCalendar
{
    private readonly CronExpression? _cron;
    private readonly TimeZoneInfo _zone;
    private readonly long _intervalMs;
    private readonly long _anchorMs;
    private readonly long? _startMs;
    private readonly long? _endMs;

    private ScheduleCalendar(CronExpression? cron, TimeZoneInfo zone, long intervalMs, long anchorMs, long? startMs, long? endMs) =>
        (_cron, _zone, _intervalMs, _anchorMs, _startMs, _endMs) = (cron, zone, intervalMs, anchorMs, startMs, endMs);

    /// <summary>The calendar of a stored (so already checked) schedule.</summary>
    public static ScheduleCalendar For(Schedule schedule)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        var start = schedule.StartAt is { } s ? Ms(s) : (long?)null;
        var end = schedule.EndAt is { } e ? Ms(e) : (long?)null;
        if (schedule.Cron is { } cron)
        {
            return new(ParseCron(cron), FindZone(schedule.TimeZone)!, 0, 0, start, end);
        }

        var interval = schedule.IntervalSeconds!.Value * 1000;
        // Without a start, the first occurrence is one interval after the schedule was made.
        return new(null, TimeZoneInfo.Utc, interval, start ?? Ms(schedule.CreatedAt) + interval, start, end);
    }

    /// <summary>The first occurrence strictly after <paramref name="afterMs"/>; null when there is none before the end.</summary>
    public long? NextAfter(long afterMs)
    {
        if (_startMs is { } start && afterMs < start)
        {
            afterMs = start - 1;
        }

        long next;
        if (_cron is not null)
        {
            // Cron occurrences fall on whole seconds: the next one after this millisecond is after its second.
            var from = DateTime.UnixEpoch.AddMilliseconds(afterMs - (((afterMs % 1000) + 1000) % 1000));
            if (_cron.GetNextOccurrence(from, _zone, inclusive: false) is not { } occurrence)
            {
                return null;
            }

            next = Ms(occurrence);
        }
        else
        {
            next = afterMs < _anchorMs ? _anchorMs : _anchorMs + (((afterMs - _anchorMs) / _intervalMs) + 1) * _intervalMs;
        }

        return _endMs is { } end && next > end ? null : next;
    }

    /// <summary>The occurrences from <paramref name="fromMs"/> through <paramref name="toMs"/>, both included, oldest first.</summary>
    public IEnumerable<long> Between(long fromMs, long toMs)
    {
        for (var next = NextAfter(fromMs - 1); next is { } at && at <= toMs; next = NextAfter(at))
        {
            yield return at;
        }
    }

    public static long Ms(DateTime utc) => (long)(DateTime.SpecifyKind(utc, DateTimeKind.Utc) - DateTime.UnixEpoch).TotalMilliseconds;

    public static DateTime Utc(long ms) => DateTime.UnixEpoch.AddMilliseconds(ms);

    /// <summary>Five fields (minute first), six (second first), or a macro such as @daily.</summary>
    public static CronExpression ParseCron(string cron)
    {
        ArgumentNullException.ThrowIfNull(cron);
        var fields = cron.Split(' ', StringSplitOptions.RemoveEmptyEntries).Length;
        return CronExpression.Parse(cron.Trim(), fields == 6 ? CronFormat.IncludeSeconds : CronFormat.Standard);
    }

    /// <summary>The time zone of an IANA id (or a Windows id); null when this machine knows none of that id.</summary>
    public static TimeZoneInfo? FindZone(string id)
    {
        try
        {
            return TimeZoneInfo.FindSystemTimeZoneById(id);
        }
        catch (TimeZoneNotFoundException)
        {
            return null;
        }
        catch (InvalidTimeZoneException)
        {
            return null;
        }
    }
}
