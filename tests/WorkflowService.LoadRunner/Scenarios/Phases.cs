namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>Phase names shared by scenarios and reports.</summary>
internal static class Phases
{
    /// <summary>Start request sent → 2xx received.</summary>
    public const string Start = "start";

    /// <summary>Signal request sent → 2xx received.</summary>
    public const string SignalPublish = "signalPublish";

    /// <summary>Signal acknowledged → the instance observed Completed through the long-poll.</summary>
    public const string SignalToCompletion = "signalToCompletion";

    /// <summary>The three phases every report shows, in this order, where a scenario has them.</summary>
    public static readonly string[] Reported = [Start, SignalPublish, SignalToCompletion];
}
