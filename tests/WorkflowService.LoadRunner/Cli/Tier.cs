namespace WorkflowService.LoadRunner.Cli;

/// <summary>Which scenarios a run includes.</summary>
internal enum Tier
{
    /// <summary>The smoke scenarios and idle-polling: a correctness check (exit code non-zero on any failure, dead letter or stuck instance).</summary>
    Smoke,

    /// <summary>The predecessor's fifteen scenarios (latency, throughput, capacity ladder, soak, smoke, nightly) and idle-polling.</summary>
    Standard,

    /// <summary>Standard plus the scaled scenarios and the ceiling.</summary>
    All,
}
