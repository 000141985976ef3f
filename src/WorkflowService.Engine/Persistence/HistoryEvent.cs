namespace WorkflowService.Engine.Persistence;

/// <summary>One entry of an instance's append-only history.</summary>
public sealed class HistoryEvent
{
    public long Id { get; set; }
    public Guid InstanceId { get; set; }
    public int Sequence { get; set; }
    public DateTime At { get; set; }
    public required string Type { get; set; }
    public string? StepId { get; set; }
    public string? DataJson { get; set; }

    /// <summary>Who caused it: the API caller (a token's user id or a key's name); null for the engine's own work (timers, retries).</summary>
    public string? Actor { get; set; }
}

public static class HistoryEventTypes
{
    public const string InstanceStarted = "InstanceStarted";
    public const string StepCompleted = "StepCompleted";
    public const string WaitStarted = "WaitStarted";
    public const string SignalReceived = "SignalReceived";
    public const string SignalParked = "SignalParked";
    public const string SignalUnmatched = "SignalUnmatched";
    public const string TimerFired = "TimerFired";
    public const string TimedOut = "TimedOut";
    public const string TaskCreated = "TaskCreated";
    public const string TaskCompleted = "TaskCompleted";
    public const string BranchTaken = "BranchTaken";
    public const string StepFailed = "StepFailed";
    public const string CallOutStarted = "CallOutStarted";
    public const string SubWorkflowStarted = "SubWorkflowStarted";
    public const string SubWorkflowEnded = "SubWorkflowEnded";
    public const string CallOutCompleted = "CallOutCompleted";
    public const string InstanceCompleted = "InstanceCompleted";
    public const string InstanceFailed = "InstanceFailed";
    public const string InstanceFaulted = "InstanceFaulted";
    public const string InstanceCancelled = "InstanceCancelled";
    public const string InstanceReplayed = "InstanceReplayed";
    public const string InstanceSuspended = "InstanceSuspended";
    public const string InstanceMigrated = "InstanceMigrated";
    public const string InstanceResumed = "InstanceResumed";
    public const string CancelPathStarted = "CancelPathStarted";
    public const string ParallelStarted = "ParallelStarted";
    public const string BranchJoined = "BranchJoined";
    public const string ParallelJoined = "ParallelJoined";
    /// <summary>A forEach step evaluated its items (their count, mode and how many may be open at once).</summary>
    public const string ForEachStarted = "ForEachStarted";
    /// <summary>An item of a forEach step started (its index).</summary>
    public const string ItemStarted = "ItemStarted";
    /// <summary>An item of a forEach step ended: succeeded, failed (with its error) or cancelled.</summary>
    public const string ItemEnded = "ItemEnded";
    /// <summary>A forEach step ended: its rule was met (the run goes on) or it failed (the instance fails).</summary>
    public const string ForEachEnded = "ForEachEnded";
    /// <summary>An emit step sent a custom event: its type and data, sent to subscriptions with the commit.</summary>
    public const string EventEmitted = "EventEmitted";
}
