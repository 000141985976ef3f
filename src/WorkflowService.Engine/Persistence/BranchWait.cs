namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Where one branch of the parallel step an instance is in stands: the read model of the executor's branch state
/// (<see cref="WorkflowInstance.ParallelBranches"/>), for the API and the diagrams.
/// </summary>
/// <param name="Name">The branch's name in the definition.</param>
/// <param name="Joined">The branch ran off the end of its steps and waits for the others at the join.</param>
/// <param name="Kind">What the branch waits for; null once it has joined.</param>
/// <param name="StepId">The step it waits at.</param>
/// <param name="Signal">The signal a signal wait awaits.</param>
/// <param name="SignalId">The engine's own signal the wait ends on (timer, timeout, call-out or child start).</param>
/// <param name="TaskId">The human task a task wait awaits.</param>
public sealed record BranchWait(string Name, bool Joined, WaitKind? Kind, string? StepId, string? Signal, Guid? SignalId, Guid? TaskId)
{
    /// <summary>The item's index, when this is an item of a forEach step; null for a parallel branch.</summary>
    public int? Index { get; init; }
    /// <summary>Where a forEach item stands; null for a parallel branch.</summary>
    public ItemOutcome? Outcome { get; init; }
    /// <summary>Why a forEach item failed.</summary>
    public string? Error { get; init; }
}

/// <summary>Where one item of a forEach step stands.</summary>
public enum ItemOutcome
{
    /// <summary>Not started yet (it waits for a free place under maxConcurrency).</summary>
    Pending,
    /// <summary>Started; its body waits.</summary>
    Open,
    Succeeded,
    Failed,
    /// <summary>Closed while open or pending: the step's completion rule was met, or the step failed.</summary>
    Cancelled,
}
