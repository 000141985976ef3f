using System.Text.Json.Serialization;

namespace WorkflowService.Testing;

/// <summary>One data node as the pg_auto_failover monitor sees it (a row of <c>pg_autoctl show state --json</c>).</summary>
internal sealed record AutoFailoverNodeState(
    [property: JsonPropertyName("node_id")] int NodeId,
    [property: JsonPropertyName("nodename")] string Name,
    [property: JsonPropertyName("nodehost")] string Host,
    [property: JsonPropertyName("nodeport")] int Port,
    [property: JsonPropertyName("current_group_state")] string ReportedState,
    [property: JsonPropertyName("assigned_group_state")] string AssignedState,
    [property: JsonPropertyName("reported_tli")] int Timeline,
    [property: JsonPropertyName("reported_lsn")] string ReportedLsn,
    [property: JsonPropertyName("replication_quorum")] bool ReplicationQuorum,
    [property: JsonPropertyName("health")] int Health)
{
    /// <summary>Whether the node takes writes and the monitor agrees (primary; wait_primary while it has no standby in step).</summary>
    public bool IsPrimary => ReportedState == AssignedState && ReportedState is "primary" or "wait_primary" or "single";

    /// <summary>Whether the node is a standby in step with the primary, and the monitor agrees.</summary>
    public bool IsSecondary => ReportedState == AssignedState && ReportedState == "secondary";

    public override string ToString() => $"{Name} ({Host}:{Port}) {ReportedState}/{AssignedState} tli {Timeline} lsn {ReportedLsn}";
}
