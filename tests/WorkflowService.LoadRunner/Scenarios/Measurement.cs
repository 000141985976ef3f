namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>What a scenario measured: every operation, the measured wall-clock time, and anything it wants to say.</summary>
internal sealed record Measurement(IReadOnlyList<OperationSample> Samples, TimeSpan Duration)
{
    public List<string> Notes { get; } = [];

    /// <summary>Scenario-specific figures (e.g. claim misses of the ceiling loop).</summary>
    public Dictionary<string, double> Figures { get; } = new(StringComparer.Ordinal);
}
