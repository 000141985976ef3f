namespace WorkflowService.Testing;

/// <summary>How the primary of an <see cref="OwnedAutoFailoverCluster"/> replicates to its secondary.</summary>
internal enum AutoFailoverReplication
{
    /// <summary>
    /// The secondary is in the write quorum (replication-quorum true): the primary's synchronous_standby_names names it,
    /// and a commit is acknowledged once the secondary has it.
    /// </summary>
    Synchronous,

    /// <summary>The secondary is out of the write quorum (replication-quorum false): the primary does not wait for it.</summary>
    Asynchronous,
}
