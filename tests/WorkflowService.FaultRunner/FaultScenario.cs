using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>One row of the fault table: a way things fail, injected under load on a fresh database, then checked.</summary>
internal abstract class FaultScenario
{
    /// <summary>The row's name (faults --only), e.g. node-kill.</summary>
    public required string Name { get; init; }

    /// <summary>The row's number in the list of faults.</summary>
    public required int Number { get; init; }

    /// <summary>What is done to the service, in one line.</summary>
    public required string Title { get; init; }

    /// <summary>Whether the row needs a PostgreSQL server of its own (<see cref="OwnedPostgresServer"/>) on <paramref name="backend"/>, to stop or pause.</summary>
    public virtual bool OwnsDatabaseServer(string backend) => false;

    /// <summary>
    /// The pg_auto_failover cluster (monitor, primary, secondary) the row runs on, for a row that fails its primary over
    /// (<see cref="OwnedAutoFailoverCluster"/>); null for a row on one server.
    /// </summary>
    public virtual AutoFailoverOptions? FailoverCluster => null;

    /// <summary>Whether the row's embedded store lives on a small filesystem of its own (<see cref="SmallDisk"/>), to fill.</summary>
    public virtual bool FillsItsDisk => false;

    /// <summary>Whether the row's embedded store lives on a filesystem of its own that can turn read-only (<see cref="ReadOnlyDisk"/>).</summary>
    public virtual bool TurnsItsDiskReadOnly => false;

    /// <summary>Why the fault does not apply to <paramref name="backend"/>, or null when it does.</summary>
    public virtual string? NotApplicable(string backend) => null;

    /// <summary>Why the short tier (every CI run) leaves the row out on <paramref name="backend"/>, or null where it runs it.</summary>
    public virtual string? LeftOutOfShortTier(string backend) => null;

    /// <summary>
    /// For rows whose fault the engine handles in the same code over either store (a lease, an idempotency key, a retry, a
    /// sandbox): the short tier runs them where they are hardest, on PostgreSQL with several nodes, and the full tier on both.
    /// </summary>
    protected static string? SeveralNodesOnlyInShortTier(string backend) => backend == "sqlite"
        ? "the engine handles this fault in the same code over either store; the short tier runs it on PostgreSQL with three nodes, the full tier on both"
        : null;

    public abstract Task<FaultOutcome> RunAsync(FaultContext context);
}
