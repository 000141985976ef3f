namespace WorkflowService.Engine.Persistence;

/// <summary>A leased signal and its instance as read with the claim; null when the instance is missing.</summary>
public sealed record ClaimedSignal(SignalMessage Signal, WorkflowInstance? Instance);
