using System.Globalization;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Schedules;

/// <summary>
/// Starts one occurrence of a schedule through the idempotent start: its Idempotency-Key is the schedule's id and the
/// occurrence's time, so however many nodes, retries and backfills reach it, it starts one instance.
/// </summary>
public sealed class OccurrenceStarter(InstanceStarter starter, IInstanceStore instances)
{
    /// <summary>The idempotency key of the occurrence at <paramref name="fireMs"/>.</summary>
    public static string KeyOf(Guid scheduleId, long fireMs) => string.Create(CultureInfo.InvariantCulture, $"schedule:{scheduleId:N}:{fireMs}");

    /// <summary>The actor its instances are started by.</summary>
    public static string ActorOf(Schedule schedule)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        return $"schedule:{schedule.Name}";
    }

    /// <summary>The occurrence's instance if it was started already (found by its idempotency key), as the schedule records it; else null.</summary>
    public async Task<ScheduleAction?> FindAsync(Schedule schedule, long fireMs, DateTime now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        var found = await instances.FindInstanceAsync(schedule.Tenant, KeyOf(schedule.Id, fireMs), schedule.DefinitionName, null, cancellationToken)
            .ConfigureAwait(false);
        return found is null ? null : new(ScheduleCalendar.Utc(fireMs), ScheduleAction.AlreadyStarted, found.Id, found.BusinessKey, now);
    }

    /// <summary>Starts (or finds) the occurrence's instance and says what happened, as the schedule records it.</summary>
    public async Task<ScheduleAction> StartAsync(Schedule schedule, long fireMs, DateTime now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        var fireTime = ScheduleCalendar.Utc(fireMs);
        var key = BusinessKeyTemplate.Render(schedule.BusinessKeyTemplate, schedule.Id, schedule.Name, fireTime);
        var result = await starter.StartAsync(
            new StartRequest(schedule.DefinitionName, schedule.DefinitionVersion, schedule.InputJson, key, KeyOf(schedule.Id, fireMs),
                Actor: ActorOf(schedule), Tenant: schedule.Tenant),
            cancellationToken).ConfigureAwait(false);
        return result switch
        {
            { Outcome: StartOutcome.Created, Instance: { } created } => new(fireTime, ScheduleAction.Started, created.Id, key, now),
            { Outcome: StartOutcome.Existing, Instance: { } existing } => new(fireTime, ScheduleAction.AlreadyStarted, existing.Id, key, now),
            _ => new(fireTime, ScheduleAction.Failed, null,
                $"definition '{schedule.DefinitionName}'{(schedule.DefinitionVersion is { } v ? $" version {v}" : "")} is not published", now),
        };
    }

    /// <summary><paramref name="recent"/> with <paramref name="actions"/> in front, newest first, at most <paramref name="keep"/>.</summary>
    public static IReadOnlyList<ScheduleAction> Remember(IReadOnlyList<ScheduleAction> recent, IEnumerable<ScheduleAction> actions, int keep) =>
        [.. actions.Reverse().Concat(recent).Take(keep)];
}
