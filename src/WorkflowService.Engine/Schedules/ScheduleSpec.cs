using Cronos;
using WorkflowService.Engine.Definitions;

namespace WorkflowService.Engine.Schedules;

/// <summary>A schedule as a caller writes it; <see cref="Problems"/> checks it before anything is stored.</summary>
public sealed record ScheduleSpec(
    string? Name,
    string? Definition,
    int? Version,
    string? InputJson,
    string? Cron,
    string? TimeZone,
    long? IntervalSeconds,
    DateTime? StartAt,
    DateTime? EndAt,
    long? JitterSeconds,
    string? BusinessKey,
    ScheduleOverlap? Overlap,
    ScheduleCatchUp? CatchUp,
    long? CatchUpWindowSeconds)
{
    public const int MaxNameLength = 100;

    /// <summary>What is wrong with it, each at the JSON path of the field; empty when it may be stored.</summary>
    public List<Diagnostic> Problems(ScheduleOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new List<Diagnostic>();
        if (string.IsNullOrWhiteSpace(Name) || Name.Length > MaxNameLength)
        {
            problems.Add(new("$.name", $"name is required, 1 to {MaxNameLength} characters"));
        }

        if (string.IsNullOrWhiteSpace(Definition) || Definition.Length > 100)
        {
            problems.Add(new("$.definition", "definition is required: the name of a published definition"));
        }

        if (Version is < 1)
        {
            problems.Add(new("$.version", "version must be 1 or more, or absent for the latest"));
        }

        CheckCalendar(options, problems);
        if (StartAt is { } start && EndAt is { } end && end <= start)
        {
            problems.Add(new("$.endAt", $"endAt ({end:O}) must be after startAt ({start:O})"));
        }

        if (JitterSeconds is { } jitter && (jitter < 0 || jitter > options.MaxJitter.TotalSeconds))
        {
            problems.Add(new("$.jitterSeconds", $"jitterSeconds must be 0 to {options.MaxJitter.TotalSeconds:0} (Schedules:MaxJitter)"));
        }

        if (BusinessKey is not null && BusinessKeyTemplate.Problem(BusinessKey, Name ?? "") is { } keyProblem)
        {
            problems.Add(new("$.businessKey", $"businessKey {keyProblem}"));
        }

        if (CatchUpWindowSeconds is { } window && (window < 1 || window > options.MaxCatchUpWindow.TotalSeconds))
        {
            problems.Add(new("$.catchUpWindowSeconds",
                $"catchUpWindowSeconds must be 1 to {options.MaxCatchUpWindow.TotalSeconds:0} (Schedules:MaxCatchUpWindow)"));
        }

        return problems;
    }

    private void CheckCalendar(ScheduleOptions options, List<Diagnostic> problems)
    {
        if ((Cron is null) == (IntervalSeconds is null))
        {
            problems.Add(new("$.cron", "give either cron (with an optional timeZone) or intervalSeconds, not both and not neither"));
            return;
        }

        if (Cron is not null)
        {
            try
            {
                ScheduleCalendar.ParseCron(Cron);
            }
            catch (CronFormatException e)
            {
                problems.Add(new("$.cron", $"cron '{Cron}' is not a cron expression (5 fields, or 6 with seconds first): {e.Message}"));
            }

            if (TimeZone is not null && ScheduleCalendar.FindZone(TimeZone) is null)
            {
                problems.Add(new("$.timeZone", $"timeZone '{TimeZone}' is not a known time zone: use an IANA id such as Europe/Berlin"));
            }
        }
        else if (IntervalSeconds < options.MinInterval.TotalSeconds || IntervalSeconds > 366L * 24 * 3600)
        {
            problems.Add(new("$.intervalSeconds", $"intervalSeconds must be {options.MinInterval.TotalSeconds:0} (Schedules:MinInterval) to {366L * 24 * 3600}"));
        }
    }

    /// <summary>Writes the caller's fields onto <paramref name="schedule"/> (its state stays).</summary>
    public void ApplyTo(Schedule schedule)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        schedule.Name = Name!;
        schedule.DefinitionName = Definition!;
        schedule.DefinitionVersion = Version;
        schedule.InputJson = InputJson;
        schedule.Cron = Cron?.Trim();
        schedule.TimeZone = Cron is null ? "UTC" : TimeZone ?? "UTC";
        schedule.IntervalSeconds = IntervalSeconds;
        schedule.StartAt = StartAt?.ToUniversalTime();
        schedule.EndAt = EndAt?.ToUniversalTime();
        schedule.JitterSeconds = JitterSeconds ?? 0;
        schedule.BusinessKeyTemplate = BusinessKey ?? BusinessKeyTemplate.Default;
        schedule.Overlap = Overlap ?? ScheduleOverlap.Skip;
        schedule.CatchUp = CatchUp ?? ScheduleCatchUp.Skip;
        schedule.CatchUpWindowSeconds = CatchUpWindowSeconds;
    }
}
