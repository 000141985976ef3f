namespace WorkflowService.FaultRunner;

/// <summary>What a fault scenario's workload must have left in the store, for <see cref="HistoryChecker"/>.</summary>
internal sealed record CheckerExpectation
{
    /// <summary>Instances that must have completed: the service acknowledged every signal their workflow waits for.</summary>
    public required IReadOnlySet<Guid> MustComplete { get; init; }

    /// <summary>
    /// The version of a completed instance of the workload's definition (one commit per wait point, plus one per parked
    /// signal), or null where the scenario cannot know it; a higher one means a signal was applied twice.
    /// </summary>
    public IReadOnlySet<int>? CompletedVersions { get; init; }

    /// <summary>Instances the scenario faults on purpose (a poison signal dead-lettered): waiting for a replay is not stuck.</summary>
    public IReadOnlySet<Guid> MayStayFaulted { get; init; } = new HashSet<Guid>();

    /// <summary>
    /// Why the row may lose acknowledged operations (asynchronous replication, whose lesson that is), naming what prevents
    /// it; null where losing one fails the row. Where it is set, a run that lost some, and broke nothing else, is reported.
    /// </summary>
    public string? LossReportedBecause { get; init; }
}
