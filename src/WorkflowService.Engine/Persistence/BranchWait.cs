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
public sealed record BranchWait(string Name, bool Joined, WaitKind? Kind, string? StepId, string? Signal, Guid? SignalId, Guid? TaskId);
