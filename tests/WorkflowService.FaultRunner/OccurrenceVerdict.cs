namespace WorkflowService.FaultRunner;

/// <summary>What <see cref="OccurrenceCheck"/> found: each broken rule with examples (empty: passed), and the delays in one line.</summary>
internal sealed record OccurrenceVerdict(IReadOnlyList<string> Failures, string Summary)
{
    public bool Passed => Failures.Count == 0;
}
