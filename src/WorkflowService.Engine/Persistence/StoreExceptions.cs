namespace WorkflowService.Engine.Persistence;

/// <summary>Another writer changed the instance since it was read; reload and run again.</summary>
public sealed class ConcurrencyConflictException(Guid instanceId)
    : Exception($"instance {instanceId} was changed by another writer");

/// <summary>The claim on a signal expired and another worker took it over; this worker's result is discarded.</summary>
public sealed class LeaseLostException(Guid signalId)
    : Exception($"the lease on signal {signalId} was lost");

/// <summary>A start collided with an existing instance on its idempotency key or business key.</summary>
public sealed class DuplicateInstanceException(string key)
    : Exception($"an instance already exists for {key}");
