using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Schedules;

/// <summary>The outcome of a change to a schedule: the schedule as written, or why nothing was.</summary>
public sealed record ScheduleChange(Schedule? Schedule, ScheduleChangeOutcome Outcome, IReadOnlyList<Diagnostic> Problems)
{
    public static ScheduleChange Of(Schedule schedule) => new(schedule, ScheduleChangeOutcome.Done, []);
    public static ScheduleChange Failed(ScheduleChangeOutcome outcome) => new(null, outcome, []);
    public static ScheduleChange Invalid(params Diagnostic[] problems) => new(null, ScheduleChangeOutcome.Invalid, problems);
}

public enum ScheduleChangeOutcome { Done, Invalid, NotFound, DuplicateName, TooMany, Conflict }

/// <summary>What a trigger or a backfill started: the schedule after it, and one action per occurrence.</summary>
public sealed record ScheduleFiring(ScheduleChange Change, IReadOnlyList<ScheduleAction> Actions);

/// <summary>
/// Creating, changing, pausing, resuming, triggering, backfilling and deleting schedules, each within one tenant. A
/// change that races another (a caller's, or a node's fire) is read again and applied again, a bounded number of times;
/// each change rings this node's runner.
/// </summary>
public sealed class ScheduleRegistry(
    IScheduleStore store,
    IInstanceStore instances,
    DefinitionRegistry definitions,
    OccurrenceStarter occurrences,
    WorkflowRuntime runtime,
    ScheduleDoorbell doorbell,
    IStoreClock clock,
    IOptions<ScheduleOptions> options)
{
    /// <summary>How often a change that keeps losing races is tried before the caller hears of a conflict.</summary>
    private const int MaxAttempts = 5;

    public async Task<ScheduleChange> CreateAsync(string tenant, ScheduleSpec spec, bool enabled, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(spec);
        if (await CheckAsync(tenant, spec, cancellationToken).ConfigureAwait(false) is { Count: > 0 } problems)
        {
            return new(null, ScheduleChangeOutcome.Invalid, problems);
        }

        var existing = await store.ListSchedulesAsync(tenant, null, 1, cancellationToken).ConfigureAwait(false);
        if (existing.Total >= options.Value.MaxSchedulesPerTenant)
        {
            return ScheduleChange.Failed(ScheduleChangeOutcome.TooMany);
        }

        var now = clock.Now();
        var schedule = new Schedule
        {
            Id = Guid.CreateVersion7(now.UtcDateTime),
            Tenant = tenant,
            Name = spec.Name!,
            DefinitionName = spec.Definition!,
            BusinessKeyTemplate = BusinessKeyTemplate.Default,
            Enabled = enabled,
            PausedReason = enabled ? null : "created paused",
            CreatedAt = now.UtcDateTime,
            UpdatedAt = now.UtcDateTime,
            Version = 1,
        };
        spec.ApplyTo(schedule);
        Restart(schedule, now.UnixMs);
        if (!await store.CreateScheduleAsync(schedule, cancellationToken).ConfigureAwait(false))
        {
            return ScheduleChange.Failed(ScheduleChangeOutcome.DuplicateName);
        }

        doorbell.Ring();
        return ScheduleChange.Of(schedule);
    }

    /// <summary>Replaces what the caller wrote; the calendar starts again from now (occurrences missed under the old one are not caught up).</summary>
    public async Task<ScheduleChange> ReplaceAsync(string tenant, Guid id, ScheduleSpec spec, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(spec);
        if (await CheckAsync(tenant, spec, cancellationToken).ConfigureAwait(false) is { Count: > 0 } problems)
        {
            return new(null, ScheduleChangeOutcome.Invalid, problems);
        }

        return await ChangeAsync(tenant, id, (s, nowMs) =>
        {
            spec.ApplyTo(s);
            Restart(s, nowMs);
            return true;
        }, cancellationToken).ConfigureAwait(false);
    }

    public Task<ScheduleChange> PauseAsync(string tenant, Guid id, string reason, CancellationToken cancellationToken) =>
        ChangeAsync(tenant, id, (s, _) =>
        {
            s.Enabled = false;
            s.PausedReason = reason;
            s.SetDue();
            return true;
        }, cancellationToken);

    /// <summary>Resumes from now: what fell due while it was paused is not caught up (as Temporal's unpause).</summary>
    public Task<ScheduleChange> ResumeAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        ChangeAsync(tenant, id, (s, nowMs) =>
        {
            if (s.Enabled)
            {
                return false;
            }

            s.Enabled = true;
            s.PausedReason = null;
            Restart(s, nowMs);
            return true;
        }, cancellationToken);

    public async Task<bool> DeleteAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        await store.DeleteScheduleAsync(tenant, id, cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Starts an occurrence at the store's now, whatever the calendar and the pause say, as <paramref name="overlap"/>
    /// (or else the schedule's overlap policy) decides.
    /// </summary>
    public async Task<ScheduleFiring> TriggerAsync(string tenant, Guid id, ScheduleOverlap? overlap, CancellationToken cancellationToken)
    {
        if (await store.GetScheduleAsync(tenant, id, cancellationToken).ConfigureAwait(false) is not { } schedule)
        {
            return new(ScheduleChange.Failed(ScheduleChangeOutcome.NotFound), []);
        }

        return await FireAsync(schedule, [clock.Now().UnixMs], overlap ?? schedule.Overlap, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Starts every occurrence of the calendar from <paramref name="from"/> through <paramref name="to"/>, oldest first,
    /// whatever the pause says, as <paramref name="overlap"/> (or else the schedule's overlap policy) decides; an
    /// occurrence that already ran is found, not started again.
    /// </summary>
    public async Task<ScheduleFiring> BackfillAsync(
        string tenant, Guid id, DateTime from, DateTime to, ScheduleOverlap? overlap, CancellationToken cancellationToken)
    {
        if (to < from)
        {
            return new(ScheduleChange.Invalid(new Diagnostic("$.to", $"to ({to:O}) must not be before from ({from:O})")), []);
        }

        if (await store.GetScheduleAsync(tenant, id, cancellationToken).ConfigureAwait(false) is not { } schedule)
        {
            return new(ScheduleChange.Failed(ScheduleChangeOutcome.NotFound), []);
        }

        var max = options.Value.MaxBackfillOccurrences;
        var fires = ScheduleCalendar.For(schedule).Between(ScheduleCalendar.Ms(from.ToUniversalTime()), ScheduleCalendar.Ms(to.ToUniversalTime()))
            .Take(max + 1).ToList();
        if (fires.Count > max)
        {
            return new(ScheduleChange.Invalid(new Diagnostic("$.to",
                $"the range holds more than {max} occurrences (Schedules:MaxBackfillOccurrences); backfill a shorter range")), []);
        }

        return await FireAsync(schedule, fires, overlap ?? schedule.Overlap, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A trigger's or a backfill's occurrences: those started already are found (so asking again answers the same), the
    /// overlap policy decides the others, as Temporal's manual actions are decided; the pause does not apply.
    /// </summary>
    private async Task<ScheduleFiring> FireAsync(Schedule schedule, List<long> fires, ScheduleOverlap overlap, CancellationToken cancellationToken)
    {
        var at = clock.Now().UtcDateTime;
        var actions = new List<ScheduleAction>(fires.Count);
        var fresh = new List<long>(fires.Count);
        foreach (var fire in fires)
        {
            if (await occurrences.FindAsync(schedule, fire, at, cancellationToken).ConfigureAwait(false) is { } found)
            {
                actions.Add(found);
            }
            else
            {
                fresh.Add(fire);
            }
        }

        var previousOpen = overlap != ScheduleOverlap.AllowAll && fresh.Count > 0 && schedule.LastInstanceId is { } last
            && await instances.GetInstanceAsync(schedule.Tenant, last, cancellationToken).ConfigureAwait(false) is { } previous
            && !previous.Status.IsTerminal();
        var decision = OverlapDecision.For(overlap, previousOpen, null, fresh);
        // One occurrence waits in the buffer at a time: the runner's, or this one's if the buffer is empty.
        var buffered = decision.Buffered is { } held && schedule.BufferedFireMs is null ? held : (long?)null;
        var skipped = decision.Buffered is { } overflow && buffered is null ? [.. decision.Skipped, overflow] : decision.Skipped;
        actions.AddRange(skipped.Select(f => new ScheduleAction(ScheduleCalendar.Utc(f), ScheduleAction.Skipped, null,
            $"an instance it started is still open (overlap {overlap})", at)));
        if (buffered is { } waiting)
        {
            actions.Add(new(ScheduleCalendar.Utc(waiting), ScheduleAction.Buffered, null, "waits for the open instance to end (overlap BufferOne)", at));
        }

        if (decision.CancelPrevious && schedule.LastInstanceId is { } open)
        {
            await runtime.CancelAsync(schedule.Tenant, open, $"a newer occurrence of schedule '{schedule.Name}' starts (overlap CancelPrevious)",
                OccurrenceStarter.ActorOf(schedule), cancellationToken).ConfigureAwait(false);
        }

        var started = new List<ScheduleAction>(decision.Start.Count);
        foreach (var fire in decision.Start)
        {
            started.Add(await occurrences.StartAsync(schedule, fire, at, cancellationToken).ConfigureAwait(false));
        }

        actions.AddRange(started);
        actions.Sort((a, b) => a.FireTime.CompareTo(b.FireTime));
        return new(await RecordAsync(schedule.Tenant, schedule.Id, actions, started.LastOrDefault(a => a.InstanceId is not null)?.InstanceId, buffered,
            cancellationToken).ConfigureAwait(false), actions);
    }

    /// <summary>What is wrong with <paramref name="spec"/>, an unknown definition included; empty when it may be written.</summary>
    private async Task<List<Diagnostic>> CheckAsync(string tenant, ScheduleSpec spec, CancellationToken cancellationToken)
    {
        var problems = spec.Problems(options.Value);
        if (!problems.Exists(p => p.Path is "$.definition" or "$.version")
            && await definitions.GetAsync(tenant, spec.Definition!, spec.Version, cancellationToken).ConfigureAwait(false) is null)
        {
            problems.Add(new("$.definition", spec.Version is { } v
                ? $"definition '{spec.Definition}' has no version {v}"
                : $"no definition '{spec.Definition}' is published"));
        }

        return problems;
    }

    /// <summary>
    /// Keeps the actions of a trigger or backfill in the schedule's recent list, the instance it started last as the one
    /// overlap looks at, and the occurrence it buffered (unless another took the buffer meanwhile).
    /// </summary>
    private Task<ScheduleChange> RecordAsync(string tenant, Guid id, IReadOnlyList<ScheduleAction> actions, Guid? lastStarted, long? buffered,
        CancellationToken cancellationToken) =>
        ChangeAsync(tenant, id, (s, nowMs) =>
        {
            s.Recent = OccurrenceStarter.Remember(s.Recent, actions, options.Value.RecentActions);
            s.LastInstanceId = lastStarted ?? s.LastInstanceId;
            if (buffered is not null && s.BufferedFireMs is null)
            {
                s.BufferedFireMs = buffered;
                s.SetDue(nowMs + (long)options.Value.PollInterval.TotalMilliseconds);
            }

            return true;
        }, cancellationToken);

    /// <summary>The cursor on the first occurrence after now, nothing buffered.</summary>
    private static void Restart(Schedule schedule, long nowMs)
    {
        schedule.NextFireMs = ScheduleCalendar.For(schedule).NextAfter(nowMs);
        schedule.BufferedFireMs = null;
        schedule.SetDue();
    }

    /// <summary>Reads, changes and writes the schedule until no one else wrote it in between (a bounded number of times).</summary>
    private async Task<ScheduleChange> ChangeAsync(string tenant, Guid id, Func<Schedule, long, bool> change, CancellationToken cancellationToken)
    {
        for (var attempt = 0; attempt < MaxAttempts; attempt++)
        {
            if (await store.GetScheduleAsync(tenant, id, cancellationToken).ConfigureAwait(false) is not { } stored)
            {
                return ScheduleChange.Failed(ScheduleChangeOutcome.NotFound);
            }

            var changed = stored.Clone();
            var now = clock.Now();
            if (!change(changed, now.UnixMs))
            {
                return ScheduleChange.Of(stored);
            }

            changed.UpdatedAt = now.NotBefore(stored.UpdatedAt);
            switch (await store.UpdateScheduleAsync(changed, stored.Version, cancellationToken).ConfigureAwait(false))
            {
                case ScheduleWrite.Written:
                    changed.Version = stored.Version + 1;
                    doorbell.Ring();
                    return ScheduleChange.Of(changed);
                case ScheduleWrite.NotFound:
                    return ScheduleChange.Failed(ScheduleChangeOutcome.NotFound);
                case ScheduleWrite.DuplicateName:
                    return ScheduleChange.Failed(ScheduleChangeOutcome.DuplicateName);
            }
        }

        return ScheduleChange.Failed(ScheduleChangeOutcome.Conflict);
    }
}
