using System.ComponentModel;
using System.Text.Json;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.Api;

/// <summary>A schedule as a caller writes it.</summary>
public sealed record ScheduleRequest(
    [property: Description("Its name, unique in the tenant.")] string Name,
    [property: Description("The definition each occurrence starts.")] string Definition,
    [property: Description("The version it starts; absent for the latest published at each occurrence.")] int? Version = null,
    [property: Description("The input of every instance it starts.")] JsonElement? Input = null,
    [property: Description("A cron expression: 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or a macro such as @daily. Give cron or intervalSeconds.")]
    string? Cron = null,
    [property: Description("The IANA time zone the cron expression is read in (default UTC), e.g. Europe/Berlin.")] string? TimeZone = null,
    [property: Description("A fixed interval in seconds, from startAt (or one interval after creation). Give cron or intervalSeconds.")]
    long? IntervalSeconds = null,
    [property: Description("No occurrence before this instant.")] DateTime? StartAt = null,
    [property: Description("No occurrence after this instant.")] DateTime? EndAt = null,
    [property: Description("Each occurrence starts up to this many seconds after its time (the same delay on every node).")] long? JitterSeconds = null,
    [property: Description("The business key of each occurrence's instance, with {scheduleId}, {scheduleName} and {fireTime} or {fireTime:format} (UTC); default {scheduleName}-{fireTime}.")]
    string? BusinessKey = null,
    [property: Description("What an occurrence does while the last instance it started is open: Skip (default), BufferOne, AllowAll, CancelPrevious.")]
    ScheduleOverlap? OverlapPolicy = null,
    [property: Description("What happens to occurrences missed while no node ran it: Skip (default), Last, All (within catchUpWindowSeconds).")]
    ScheduleCatchUp? CatchUpPolicy = null,
    [property: Description("With catchUpPolicy All: how old a missed occurrence may be and still run (default Schedules:MaxCatchUpWindow).")]
    long? CatchUpWindowSeconds = null,
    [property: Description("Whether it starts active (the default) or paused. Ignored on a change: pause and resume do that.")] bool? Enabled = null)
{
    internal ScheduleSpec Spec => new(Name, Definition, Version, Json.Text(Input), Cron, TimeZone, IntervalSeconds, StartAt, EndAt, JitterSeconds,
        BusinessKey, OverlapPolicy, CatchUpPolicy, CatchUpWindowSeconds);
}

/// <summary>A schedule, with its next fire times and what it did lately.</summary>
public sealed record ScheduleView(
    Guid Id,
    string Name,
    string Definition,
    int? Version,
    JsonElement? Input,
    string? Cron,
    string TimeZone,
    long? IntervalSeconds,
    DateTime? StartAt,
    DateTime? EndAt,
    long JitterSeconds,
    string BusinessKey,
    ScheduleOverlap OverlapPolicy,
    ScheduleCatchUp CatchUpPolicy,
    long? CatchUpWindowSeconds,
    [property: Description("active, paused (see pausedReason), or ended (no occurrence is left before endAt)")] string Status,
    string? PausedReason,
    [property: Description("The next occurrences (UTC, before jitter); empty while paused or ended.")] IReadOnlyList<DateTime> NextFireTimes,
    [property: Description("The occurrence waiting for the open instance to end (overlapPolicy BufferOne).")] DateTime? BufferedFireTime,
    [property: Description("The instance it started last.")] Guid? LastInstanceId,
    [property: Description("What it did lately, newest first.")] IReadOnlyList<ScheduleActionView> Recent,
    DateTime CreatedAt,
    DateTime UpdatedAt,
    [property: Description("Counts its changes, fires included.")] int Revision)
{
    public const string Active = "active";
    public const string Paused = "paused";
    public const string Ended = "ended";

    internal static ScheduleView From(Schedule s, int shown)
    {
        var next = new List<DateTime>();
        if (s.Enabled && s.NextFireMs is { } first)
        {
            var calendar = ScheduleCalendar.For(s);
            for (long? at = first; at is { } ms && next.Count < shown; at = calendar.NextAfter(ms))
            {
                next.Add(ScheduleCalendar.Utc(ms));
            }
        }

        var status = !s.Enabled ? Paused : s.NextFireMs is null && s.BufferedFireMs is null ? Ended : Active;
        return new(s.Id, s.Name, s.DefinitionName, s.DefinitionVersion, Json.Element(s.InputJson), s.Cron, s.TimeZone, s.IntervalSeconds,
            s.StartAt, s.EndAt, s.JitterSeconds, s.BusinessKeyTemplate, s.Overlap, s.CatchUp, s.CatchUpWindowSeconds, status, s.PausedReason, next,
            s.BufferedFireMs is { } buffered ? ScheduleCalendar.Utc(buffered) : null, s.LastInstanceId, [.. s.Recent.Select(ScheduleActionView.From)],
            s.CreatedAt, s.UpdatedAt, s.Version);
    }
}

/// <summary>One thing a schedule did with one occurrence.</summary>
public sealed record ScheduleActionView(
    [property: Description("The occurrence's time (UTC, before jitter).")] DateTime FireTime,
    [property: Description("started, alreadyStarted (found by its idempotency key), skipped, buffered or failed.")] string Outcome,
    Guid? InstanceId,
    [property: Description("The business key it started with, or why it was skipped or failed.")] string? Detail,
    DateTime At)
{
    internal static ScheduleActionView From(ScheduleAction a) => new(a.FireTime, a.Outcome, a.InstanceId, a.Detail, a.At);
}

/// <summary>The body of a pause.</summary>
public sealed record PauseScheduleRequest([property: Description("Why, kept with the schedule.")] string? Reason = null);

/// <summary>The range of a backfill: every occurrence of the calendar from through to, both included.</summary>
public sealed record BackfillRequest(
    DateTime From,
    DateTime To,
    [property: Description("How the occurrences overlap the open instance and each other; absent for the schedule's overlapPolicy.")]
    ScheduleOverlap? OverlapPolicy = null);

/// <summary>The optional body of a trigger.</summary>
public sealed record TriggerScheduleRequest(
    [property: Description("How the occurrence overlaps the open instance; absent for the schedule's overlapPolicy.")] ScheduleOverlap? OverlapPolicy = null);

/// <summary>What a trigger or a backfill started, one action per occurrence, and the schedule after it.</summary>
public sealed record ScheduleFiringView(IReadOnlyList<ScheduleActionView> Actions, ScheduleView Schedule);
