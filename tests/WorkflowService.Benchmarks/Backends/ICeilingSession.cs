namespace WorkflowService.Benchmarks.Backends;

/// <summary>
/// The database transactions the engine issues for one signal-roundtrip workflow, with no engine and no HTTP around
/// them: the start transaction (instance + two history rows), the signal insert, the claim (UPDATE … RETURNING, the
/// dialect's statement) and the completion transaction (instance + signal updated, three history rows). Thread-safe:
/// every call takes a pooled connection, as the store does.
/// </summary>
internal interface ICeilingSession : IAsyncDisposable
{
    Task StartAsync(Guid instanceId, CancellationToken cancellationToken);

    Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken);

    /// <summary>Claims at most one due signal (any instance's, as a worker would); null when none was free.</summary>
    Task<ClaimedSignal?> ClaimAsync(string owner, CancellationToken cancellationToken);

    Task CompleteAsync(ClaimedSignal signal, CancellationToken cancellationToken);
}
