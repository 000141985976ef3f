using System.Buffers;

namespace WorkflowService.Engine.Events;

/// <summary>
/// The events the service sends to subscriptions: the standard ones, named after what happened, and custom ones that a
/// definition's <c>emit</c> step names. Custom names may not use the standard names' namespaces.
/// </summary>
public static class EventTypes
{
    public const string InstanceStarted = "instance.started";
    public const string InstanceCompleted = "instance.completed";
    public const string InstanceFailed = "instance.failed";
    public const string InstanceFaulted = "instance.faulted";
    public const string InstanceCancelled = "instance.cancelled";
    public const string InstanceTerminated = "instance.terminated";
    public const string InstanceSuspended = "instance.suspended";
    public const string InstanceResumed = "instance.resumed";
    public const string InstanceMigrated = "instance.migrated";
    public const string TaskCreated = "task.created";
    public const string TaskClaimed = "task.claimed";
    public const string TaskCompleted = "task.completed";
    public const string SignalDeadLettered = "signal.deadLettered";

    /// <summary>In a subscription's list: every event, standard and custom.</summary>
    public const string All = "*";

    /// <summary>The longest event type name.</summary>
    public const int MaxLength = 100;

    public static readonly IReadOnlyList<string> Standard =
    [
        InstanceStarted, InstanceCompleted, InstanceFailed, InstanceFaulted, InstanceCancelled, InstanceTerminated,
        InstanceSuspended, InstanceResumed, InstanceMigrated, TaskCreated, TaskClaimed, TaskCompleted, SignalDeadLettered,
    ];

    private static readonly string[] ReservedPrefixes = ["instance.", "task.", "signal."];

    private static readonly SearchValues<char> NameCharacters =
        SearchValues.Create("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");

    public static bool IsStandard(string type) => Standard.Contains(type, StringComparer.Ordinal);

    /// <summary>Why <paramref name="type"/> cannot name a custom event, in a definition author's terms; null when it can.</summary>
    public static string? CustomTypeProblem(string type)
    {
        if (type.Length is 0 or > MaxLength)
        {
            return $"an event type has 1 to {MaxLength} characters";
        }

        if (!char.IsAsciiLetter(type[0]) || type.AsSpan().ContainsAnyExcept(NameCharacters))
        {
            return "an event type starts with a letter and has only letters, digits, '.', '-' and '_'";
        }

        return Array.Find(ReservedPrefixes, p => type.StartsWith(p, StringComparison.Ordinal)) is { } reserved
            ? $"'{reserved[..^1]}.' names the service's own events; choose another name for a custom event"
            : null;
    }

    /// <summary>
    /// Why <paramref name="entry"/> cannot be in a subscription's list of events; null when it can (a standard type,
    /// <see cref="All"/>, or a custom type).
    /// </summary>
    public static string? SubscriptionEntryProblem(string entry)
    {
        if (entry == All || IsStandard(entry))
        {
            return null;
        }

        if (Array.Exists(ReservedPrefixes, p => entry.StartsWith(p, StringComparison.Ordinal)))
        {
            return $"'{entry}' is not an event the service sends; its events are {string.Join(", ", Standard)}";
        }

        return CustomTypeProblem(entry);
    }
}
