using WorkflowService.Engine.Schedules;

namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Schedules, per tenant: every read of one takes its tenant, and another tenant's reads as missing. The claim and the
/// fire's write are the engine's: a node leases a due schedule, starts its occurrences, then writes its state back.
/// </summary>
public interface IScheduleStore
{
    /// <summary>Stores a new schedule; false (and nothing written) when its tenant already has one of that name.</summary>
    Task<bool> CreateScheduleAsync(Schedule schedule, CancellationToken cancellationToken);

    Task<Schedule?> GetScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken);

    /// <summary>Up to <paramref name="limit"/> of the tenant's schedules by name, after <paramref name="afterName"/> (from the first when null).</summary>
    Task<KeysetPage<Schedule>> ListSchedulesAsync(string tenant, string? afterName, int limit, CancellationToken cancellationToken);

    /// <summary>
    /// Writes the changed schedule (everything but its lease) when its stored version is still
    /// <paramref name="expectedVersion"/>; the version goes up by one.
    /// </summary>
    Task<ScheduleWrite> UpdateScheduleAsync(Schedule schedule, int expectedVersion, CancellationToken cancellationToken);

    /// <summary>Deletes the schedule; false when the tenant has none of that id.</summary>
    Task<bool> DeleteScheduleAsync(string tenant, Guid id, CancellationToken cancellationToken);

    /// <summary>
    /// Leases up to <paramref name="limit"/> enabled schedules due by the store's clock whose lease is free or expired, to
    /// <paramref name="owner"/> for <paramref name="lease"/>; each comes back with its new lease token.
    /// </summary>
    [EngineOnly]
    Task<IReadOnlyList<Schedule>> ClaimDueSchedulesAsync(string owner, int limit, TimeSpan lease, CancellationToken cancellationToken);

    /// <summary>
    /// Writes a claimed schedule's state after a fire and frees its lease, when the lease is still the claim's
    /// (<see cref="Schedule.LeaseToken"/>) and the version the claim read; the version goes up by one. When the schedule
    /// changed meanwhile, only the lease is freed and false returned (the next claim decides again).
    /// </summary>
    [EngineOnly]
    Task<bool> CompleteScheduleFireAsync(Schedule schedule, CancellationToken cancellationToken);

    /// <summary>Frees every schedule lease <paramref name="owner"/> holds (a node shutting down).</summary>
    [EngineOnly]
    Task ReleaseScheduleClaimsAsync(string owner, CancellationToken cancellationToken);
}

public enum ScheduleWrite { Written, NotFound, Conflict, DuplicateName }
