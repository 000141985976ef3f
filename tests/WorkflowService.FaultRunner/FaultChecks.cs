using System.Globalization;

namespace WorkflowService.FaultRunner;

/// <summary>The scenario-side checks every row shares: the load's own failures, and recovery within its bound.</summary>
internal static class FaultChecks
{
    public static void AddLoadFailures(FaultOutcome outcome, TwoSignalLoad load)
    {
        if (load.Failed > 0)
        {
            outcome.Failures.Add($"{load.Failed} workflows of the load got an error no retry could clear, e.g. {load.FailureSamples[0]}");
        }
    }

    public static void AddRecoveryFailure(FaultOutcome outcome)
    {
        if (outcome.Recovery is null)
        {
            outcome.Failures.Add("the backlog never drained");
        }
        else if (outcome.RecoveryBound is { } bound && outcome.Recovery > bound)
        {
            outcome.Failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"the backlog drained {outcome.Recovery.Value.TotalSeconds:0.0} s after the last fault, over the bound of {bound.TotalSeconds:0} s"));
        }
    }
}
