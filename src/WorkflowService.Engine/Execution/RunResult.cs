using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Execution;

/// <summary>What one run produced: a commit to write, or the failure of a step (nothing to write).</summary>
public sealed class RunResult
{
    private RunResult(WaitPointCommit? commit, string? error, string? failedStepId)
    {
        Commit = commit;
        Error = error;
        FailedStepId = failedStepId;
    }

    public WaitPointCommit? Commit { get; }
    public string? Error { get; }
    public string? FailedStepId { get; }
    public bool Succeeded => Commit is not null;

    public static RunResult Success(WaitPointCommit commit) => new(commit, null, null);
    public static RunResult Failure(string? stepId, string error) => new(null, error, stepId);
}
