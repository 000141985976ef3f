namespace WorkflowService.FaultRunner;

/// <summary>How big a fault run is (faults --tier).</summary>
internal enum FaultTier
{
    /// <summary>The CI tier: fewer faults and less load per scenario, a few minutes for the set.</summary>
    Short,

    /// <summary>The published table (docs/reliability.md): the scenarios at the sizes the issue names.</summary>
    Full,
}
