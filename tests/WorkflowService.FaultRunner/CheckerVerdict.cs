namespace WorkflowService.FaultRunner;

/// <summary>
/// The history checker's finding for one run: (a) acknowledged operations lost, (b) applied twice, (c)/(d)/(e) histories
/// that break an invariant (gaps, work after the end, waits nothing will end), (f) whether the run did the expected work.
/// </summary>
internal sealed record CheckerVerdict
{
    public required int Acknowledged { get; init; }
    public required int Lost { get; init; }
    public required int Duplicated { get; init; }
    public required int Stuck { get; init; }
    public required int Completed { get; init; }
    public required int ExpectedCompleted { get; init; }

    /// <summary>Every broken invariant, counted; <see cref="Samples"/> names the first few.</summary>
    public required int Violations { get; init; }

    /// <summary>The first findings (at most <see cref="HistoryChecker.MaxSamples"/>), each naming the instance or signal.</summary>
    public required IReadOnlyList<string> Samples { get; init; }

    /// <summary>Zero lost, duplicated, stuck and violated, and the expected work done (at least one instance).</summary>
    public bool Passed => Lost == 0 && Duplicated == 0 && Stuck == 0 && Violations == 0 && ExpectedCompleted > 0 && Completed >= ExpectedCompleted;

    /// <summary>
    /// Acknowledged operations lost, and nothing broken that losing them does not explain (an instance left waiting for a
    /// lost signal, a lost start not completed): nothing applied twice, no invariant broken. For a row that reports loss.
    /// </summary>
    public bool LostOnly => Lost > 0 && Duplicated == 0 && Violations == 0 && ExpectedCompleted > 0;

    /// <summary>What failed, one phrase each; empty when <see cref="Passed"/>.</summary>
    public IReadOnlyList<string> Problems => [.. new[]
            {
                Lost > 0 ? $"{Lost} lost" : null,
                Duplicated > 0 ? $"{Duplicated} duplicated" : null,
                Stuck > 0 ? $"{Stuck} stuck" : null,
                Violations > 0 ? $"{Violations} invariant violations" : null,
                ExpectedCompleted == 0 ? "no work done" : Completed < ExpectedCompleted ? $"{Completed} of {ExpectedCompleted} completed" : null,
            }.OfType<string>()];
}
