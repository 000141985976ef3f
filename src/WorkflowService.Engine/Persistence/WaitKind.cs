namespace WorkflowService.Engine.Persistence;

public enum WaitKind
{
    Signal,
    Timer,
    Task,
    /// <summary>An HTTP call-out in flight: its $http signal (the wait's signal id) carries the request; the response resumes the wait.</summary>
    CallOut,
    /// <summary>A child instance runs; its end resumes the wait. The wait's signal id names the $subflow signal that started it.</summary>
    SubWorkflow,
    /// <summary>
    /// In a parallel step (WaitStepId): its branches run, each with its own wait, kept in
    /// <see cref="WorkflowInstance.BranchesJson"/>; the step continues when every branch has joined.
    /// </summary>
    Parallel,
}
