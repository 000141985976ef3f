namespace WorkflowService.FaultRunner;

/// <summary>One row of docs/reliability.md: a fault on a backend, what the load did, and the checker's verdict.</summary>
internal sealed record FaultRow
{
    public required int Number { get; init; }
    public required string Fault { get; init; }
    public required string Title { get; init; }
    public required string Backend { get; init; }
    public required string Tier { get; init; }
    public required string Date { get; init; }
    public required string Repeat { get; init; }

    /// <summary>Why the fault does not apply to this backend; the other figures are then empty.</summary>
    public string? NotApplicable { get; init; }

    /// <summary>
    /// Why the fault applies but did not run (left out of the short tier, or the machine lacks what it needs and no
    /// required list names that): never a pass; the other figures are then empty.
    /// </summary>
    public string? NotRun { get; init; }

    /// <summary>The commit the row ran at (git HEAD, with "modified" where the working tree differed).</summary>
    public string? Commit { get; init; }

    /// <summary>The machine the row ran on: its cores and processor.</summary>
    public string? Machine { get; init; }

    public int Nodes { get; init; }
    public int FaultsInjected { get; init; }
    public int Acknowledged { get; init; }

    /// <summary>Attempts that got no answer or a 5xx/429 and were retried with the same key.</summary>
    public long Retried { get; init; }

    public int Lost { get; init; }
    public int Duplicated { get; init; }
    public int Stuck { get; init; }
    public int Violations { get; init; }
    public int Completed { get; init; }
    public int ExpectedCompleted { get; init; }

    /// <summary>Signals that arrived before their wait (parked, then applied).</summary>
    public int EarlySignals { get; init; }

    public double Throughput { get; init; }
    public double? RecoverySeconds { get; init; }
    public double? RecoveryBoundSeconds { get; init; }
    public int? MaxConnections { get; init; }
    public int? ConnectionBound { get; init; }
    public bool Passed { get; init; }
    public required string Verdict { get; init; }
    public IReadOnlyList<string> Failures { get; init; } = [];
    public IReadOnlyList<string> Samples { get; init; } = [];
    public IReadOnlyList<string> Notes { get; init; } = [];
}
