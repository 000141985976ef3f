namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>One measured operation: whether it ended as expected, its end-to-end time and its phases, in ms.</summary>
internal sealed record OperationSample(bool Ok, double EndToEndMs, IReadOnlyDictionary<string, double> Phases, string? Error)
{
    public static OperationSample Failed(double elapsedMs, Exception error) =>
        new(false, elapsedMs, new Dictionary<string, double>(), $"{error.GetType().Name}: {error.Message}");
}
