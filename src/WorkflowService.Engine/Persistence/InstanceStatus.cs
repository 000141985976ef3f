namespace WorkflowService.Engine.Persistence;

public enum InstanceStatus
{
    /// <summary>Started; its first run has not reached a wait point yet (or is being retried).</summary>
    Running,
    /// <summary>Persisted at a wait point; a signal, timer or task completion resumes it.</summary>
    Waiting,
    Completed,
    /// <summary>Ended by a fail step of its definition.</summary>
    Failed,
    /// <summary>A step kept failing after its retries; the signal is dead-lettered and a replay resumes it.</summary>
    Faulted,
    Cancelled,
    /// <summary>Held at its wait by an operator: signals and timers are kept, not applied, until it is resumed.</summary>
    Suspended,
}

public static class InstanceStatusExtensions
{
    public static bool IsTerminal(this InstanceStatus status) =>
        status is InstanceStatus.Completed or InstanceStatus.Failed or InstanceStatus.Cancelled;
}
