namespace WorkflowService.Engine.Persistence;

// Every query is within one tenant (Tenant; "" is the default tenant): no list shows another tenant's rows.

public sealed record Page<T>(IReadOnlyList<T> Items, int Total, int Offset, int Limit);

/// <summary>
/// A page of a list read after a position in its order (keyset paging: the store seeks through an index to the position
/// and reads on from there, however deep the page): its items, how many the whole list holds, and whether any follow.
/// </summary>
public sealed record KeysetPage<T>(IReadOnlyList<T> Items, int Total, bool More);

/// <summary>Pages of history events.</summary>
public static class KeysetPage
{
    /// <summary>
    /// The page of up to <paramref name="limit"/> events after <paramref name="afterSequence"/> taken from
    /// <paramref name="events"/> (in sequence order, starting at or before the position).
    /// </summary>
    public static KeysetPage<HistoryEvent> After(IEnumerable<HistoryEvent> events, int? afterSequence, int limit, int total)
    {
        var page = events.Where(e => afterSequence is not { } a || e.Sequence > a).Take(limit + 1).ToList();
        var more = page.Count > limit;
        return new KeysetPage<HistoryEvent>(more ? page[..limit] : page, total, more);
    }
}

/// <summary>
/// Instances newest first (by creation time, then id). With <see cref="After"/> the page starts after that position
/// (keyset paging): an instance that leaves the filter meanwhile (resumed, suspended, ended) shifts nothing, so a client
/// that changes what it lists while it pages skips none of it, as an offset would. <see cref="Filter"/> (over the
/// instance's own fields and the tenant's search attributes) narrows the list further; <see cref="Order"/> sorts it by
/// creation time or by a search attribute instead (then id, in the same direction), and only instances with a value of
/// that attribute are listed. With either, <see cref="Page{T}.Total"/> counts no further than <see cref="MaxCounted"/>.
/// </summary>
public sealed record InstanceQuery(
    string? DefinitionName = null,
    InstanceStatus? Status = null,
    string? BusinessKey = null,
    DateTime? CreatedFrom = null,
    DateTime? CreatedTo = null,
    int Offset = 0,
    int Limit = 50,
    int? DefinitionVersion = null,
    string Tenant = "",
    InstancePosition? After = null,
    Guid? ParentId = null,
    Search.Query.SearchFilter? Filter = null,
    Search.Query.SearchOrder? Order = null,
    int MaxCounted = int.MaxValue)
{
    /// <summary>Whether the query needs the search path (a filter, or an order other than the default).</summary>
    public bool Searches => Filter is not null || Order is not null;
}

/// <summary>
/// An instance's place in the list's order: its creation time and id (the tie-break); in a list sorted by a search
/// attribute, that attribute's value (<see cref="SortValue"/>) and id.
/// </summary>
public sealed record InstancePosition(DateTime CreatedAt, Guid Id, object? SortValue = null)
{
    public static InstancePosition Of(WorkflowInstance instance) => new(instance.CreatedAt, instance.Id);
}

/// <summary>A signal's place in its instance's ledger, oldest first: its creation time and id (the tie-break).</summary>
public sealed record SignalPosition(DateTime CreatedAt, Guid Id)
{
    public static SignalPosition Of(SignalMessage signal) => new(signal.CreatedAt, signal.Id);
}

public sealed record TaskQuery(
    string? Assignee = null,
    string? Role = null,
    HumanTaskStatus? Status = null,
    Guid? InstanceId = null,
    int Offset = 0,
    int Limit = 50,
    TaskCandidate? CandidateOnly = null,
    string Tenant = "");

/// <summary>
/// A user who may work a task: its assignee (or claimant), a holder of its candidate role, or anyone when it names
/// neither. A query with <see cref="TaskQuery.CandidateOnly"/> returns only such tasks.
/// </summary>
public sealed record TaskCandidate(string User, IReadOnlyList<string> Roles)
{
    public bool MayWork(HumanTask task) =>
        task.Assignee == User || task.ClaimedBy == User
        || (task.Role is not null && Roles.Contains(task.Role, StringComparer.Ordinal))
        || (task.Assignee is null && task.Role is null);
}

public sealed record SignalQuery(
    SignalStatus? Status = null,
    string? ClaimedBy = null,
    string? Name = null,
    int Offset = 0,
    int Limit = 50,
    string Tenant = "");

public sealed record DefinitionSummary(string Name, int LatestVersion, string? Description, DateTime UpdatedAt);

public enum TaskClaimOutcome { Claimed, NotFound, AlreadyClaimed, Closed }

public enum TaskCompletionOutcome { Completed, NotFound, ClaimedByOther, Closed }

public enum ReplayOutcome { Replayed, NotFound, NotDeadLettered }
