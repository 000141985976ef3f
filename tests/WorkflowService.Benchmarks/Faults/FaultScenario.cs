namespace WorkflowService.Benchmarks.Faults;

/// <summary>One row of the fault table: a way things fail, injected under load on a fresh database, then checked.</summary>
internal abstract class FaultScenario
{
    /// <summary>The row's name (faults --only), e.g. node-kill.</summary>
    public required string Name { get; init; }

    /// <summary>The row's number in the list of faults.</summary>
    public required int Number { get; init; }

    /// <summary>What is done to the service, in one line.</summary>
    public required string Title { get; init; }

    /// <summary>Whether the row needs a PostgreSQL server of its own (<see cref="OwnedPostgresServer"/>), to stop or pause.</summary>
    public virtual bool OwnsDatabaseServer => false;

    /// <summary>Whether the row's embedded store lives on a small filesystem of its own (<see cref="SmallDisk"/>), to fill.</summary>
    public virtual bool FillsItsDisk => false;

    /// <summary>Whether the row's embedded store lives on a filesystem of its own that can turn read-only (<see cref="ReadOnlyDisk"/>).</summary>
    public virtual bool TurnsItsDiskReadOnly => false;

    /// <summary>Why the fault does not apply to <paramref name="backend"/>, or null when it does.</summary>
    public virtual string? NotApplicable(string backend) => null;

    public abstract Task<FaultOutcome> RunAsync(FaultContext context);
}
