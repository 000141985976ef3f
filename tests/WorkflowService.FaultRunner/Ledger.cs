using System.Collections.Concurrent;

namespace WorkflowService.FaultRunner;

/// <summary>What the load client asked of the service and got acknowledged.</summary>
internal enum LedgerKind
{
    /// <summary>POST /instances answered 2xx: the instance exists.</summary>
    Start,

    /// <summary>POST /instances/{id}/signals answered 202: the signal is queued and will be applied.</summary>
    Signal,

    /// <summary>POST /dead-letters/{id}/replay answered 202: the signal is queued again, once.</summary>
    Replay,

    /// <summary>POST /instances/{id}/suspend answered 200: the instance is suspended (its history says so).</summary>
    Suspend,

    /// <summary>POST /instances/{id}/resume answered 200: the instance is waiting again (its history says so).</summary>
    Resume,
}

/// <summary>
/// One acknowledged operation: the id the load client gave it (sent as its Idempotency-Key), the instance, and the id the
/// service answered with (the signal's id for a signal or a replay; the instance's for a start).
/// </summary>
internal sealed record LedgerEntry(LedgerKind Kind, string ClientId, Guid InstanceId, Guid ServerId, string? SignalName, DateTimeOffset At);

/// <summary>
/// The load client's record of a fault run: every operation the service acknowledged, and how many it was asked that
/// never got an answer (a node killed under the request, a timeout). The history checker holds the store to it.
/// </summary>
internal sealed class Ledger
{
    private readonly ConcurrentQueue<LedgerEntry> _acknowledged = new();
    private long _unanswered;
    private long _refused;

    public void Acknowledge(LedgerKind kind, string clientId, Guid instanceId, Guid serverId, string? signalName = null) =>
        _acknowledged.Enqueue(new LedgerEntry(kind, clientId, instanceId, serverId, signalName, DateTimeOffset.UtcNow));

    /// <summary>An attempt that got no answer, or a 5xx: it may or may not have taken effect (the retry's key decides).</summary>
    public void Unanswered() => Interlocked.Increment(ref _unanswered);

    /// <summary>An answer the scenario expects for some attempts (a 409 to the loser of two concurrent replays).</summary>
    public void Refused() => Interlocked.Increment(ref _refused);

    public IReadOnlyList<LedgerEntry> Entries => [.. _acknowledged];

    public long UnansweredAttempts => Interlocked.Read(ref _unanswered);

    public long RefusedAttempts => Interlocked.Read(ref _refused);

    public IEnumerable<LedgerEntry> Of(LedgerKind kind) => _acknowledged.Where(e => e.Kind == kind);
}
