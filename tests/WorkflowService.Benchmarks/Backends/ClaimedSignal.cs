namespace WorkflowService.Benchmarks.Backends;

/// <summary>A signal the ceiling loop claimed: enough to complete its instance the way the engine would.</summary>
internal sealed record ClaimedSignal(Guid SignalId, Guid InstanceId, long LeaseToken);
