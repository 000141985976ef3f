namespace WorkflowService.FaultRunner;

/// <summary>What a failover row does to the primary of its pg_auto_failover cluster.</summary>
internal enum FailoverFault
{
    /// <summary>The primary's machine dies: its keeper and postmaster SIGKILLed; the monitor promotes the secondary.</summary>
    PrimaryKilled,

    /// <summary>A planned switchover (pg_autoctl perform switchover): the secondary is promoted, the primary follows it.</summary>
    Switchover,
}
