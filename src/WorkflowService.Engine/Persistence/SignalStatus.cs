namespace WorkflowService.Engine.Persistence;

public enum SignalStatus
{
    /// <summary>Due (now or later) and waiting to be claimed by a signal worker.</summary>
    Pending,
    /// <summary>Arrived before any wait for it; kept until the instance reaches a matching wait.</summary>
    Parked,
    Handled,
    /// <summary>The instance ended without ever waiting for it.</summary>
    Unmatched,
    /// <summary>Processing failed after every retry; see LastError. Can be replayed.</summary>
    DeadLettered,
    /// <summary>A timer that lost its purpose (its wait was satisfied or the instance ended).</summary>
    Cancelled,
}
