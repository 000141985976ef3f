namespace WorkflowService.FaultRunner;

/// <summary>What a fault scenario hands back: its ledger and expectation for the checker, and what it measured itself.</summary>
internal sealed class FaultOutcome
{
    public required Ledger Ledger { get; init; }
    public required CheckerExpectation Expectation { get; init; }

    /// <summary>How long the load ran (acknowledged operations / this = throughput).</summary>
    public required TimeSpan LoadTime { get; init; }

    /// <summary>How many service nodes shared the database.</summary>
    public required int Nodes { get; init; }

    /// <summary>How many faults the scenario injected (kills, pauses, ...); set late where the service counts them itself.</summary>
    public required int FaultsInjected { get; set; }

    /// <summary>
    /// From the end of the last fault until the service had recovered: every acknowledged workflow completed (a node's
    /// fault), or the nodes ready and writes served again (the store's fault); null when it never did.
    /// </summary>
    public TimeSpan? Recovery { get; set; }

    /// <summary>The longest <see cref="Recovery"/> the scenario allows; null where the issue sets none.</summary>
    public TimeSpan? RecoveryBound { get; init; }

    /// <summary>What the scenario itself found wrong (beyond the checker's verdict), e.g. a bound exceeded.</summary>
    public List<string> Failures { get; } = [];

    /// <summary>What a reader of the row should know: the faults' timing, the nodes, what was not applicable.</summary>
    public List<string> Notes { get; } = [];
}
