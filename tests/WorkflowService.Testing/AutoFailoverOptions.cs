namespace WorkflowService.Testing;

/// <summary>How an <see cref="OwnedAutoFailoverCluster"/> is set up; the timeouts are the monitor's, in pg_auto_failover's terms.</summary>
internal sealed record AutoFailoverOptions
{
    public AutoFailoverReplication Replication { get; init; } = AutoFailoverReplication.Synchronous;

    /// <summary>
    /// pgautofailover.node_considered_unhealthy_timeout: how long a node may fail health checks and stay silent before the
    /// monitor fails it over (pg_auto_failover's default: 20 s).
    /// </summary>
    public TimeSpan NodeUnhealthyAfter { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>
    /// pgautofailover.primary_demote_timeout: how long the monitor waits for a lost primary to confirm it stepped down
    /// before the secondary takes writes (pg_auto_failover's default: 30 s). A dead machine never confirms.
    /// </summary>
    public TimeSpan PrimaryDemoteTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>How long starting the monitor and both data nodes may take, to primary and secondary.</summary>
    public TimeSpan StartDeadline { get; init; } = TimeSpan.FromMinutes(3);

    /// <summary>Where the monitor's and nodes' pg_autoctl logs go (kept after disposal); null: inside the cluster's directory, removed with it.</summary>
    public string? LogDirectory { get; init; }
}
