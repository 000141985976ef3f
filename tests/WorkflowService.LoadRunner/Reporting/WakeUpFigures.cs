namespace WorkflowService.LoadRunner.Reporting;

/// <summary>The names of the wake-up figures a scenario's report carries (<see cref="ScenarioResult.Figures"/>).</summary>
internal static class WakeUpFigures
{
    /// <summary>
    /// The median of the signals' age when the service node's workers claimed them (due time, or creation, to claim, by the
    /// store's clock; GET /metrics signalAgeAtClaim), as the upper bound of the histogram bucket it lies in, in ms.
    /// </summary>
    public const string AgeAtClaimP50 = "wake-up latency p50 ms (signal age at claim, bucket bound)";

    public const string AgeAtClaimP99 = "wake-up latency p99 ms (signal age at claim, bucket bound)";

    /// <summary>Wake-up messages every node of the scenario sent, per measured operation (one workflow each).</summary>
    public const string MessagesPerWorkflow = "wake-up messages per workflow";

    /// <summary>Messages the front node sent (its commits: starts and signals).</summary>
    public const string FrontWakeUpsSent = "front node wake-up messages sent";
}
