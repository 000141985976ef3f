namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Where something waits: an instance (<see cref="WorkflowInstance"/>), or one branch of the parallel step it is in
/// (<see cref="ParallelBranch"/>). Both carry the same wait fields; the executor reads and sets them through this.
/// </summary>
public interface IWaitState
{
    WaitKind? WaitKind { get; set; }
    string? WaitStepId { get; set; }
    string? WaitSignal { get; set; }
    /// <summary>
    /// The engine's own signal the wait ends on, as stored: a delay's timer, a signal wait's timeout, a call-out's
    /// request or a child's start, by <see cref="WaitKind"/>. The executor reads it as a typed wait.
    /// </summary>
    Guid? WaitSignalId { get; set; }
    Guid? WaitTaskId { get; set; }

    /// <summary>Clears the wait fields of <paramref name="state"/> (it runs, has ended or joined).</summary>
    static void Clear(IWaitState state)
    {
        state.WaitKind = null;
        state.WaitStepId = null;
        state.WaitSignal = null;
        state.WaitSignalId = null;
        state.WaitTaskId = null;
    }
}
