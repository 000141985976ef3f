using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>The store's clock (<see cref="IStoreClock"/>).</summary>
public sealed partial class RelationalWorkflowStore : IStoreClock
{
    // The store's clock: this process's clock corrected by its distance to the database's, measured at start-up, so
    // that every node agrees on when a signal is due.
    private long _clockOffsetMs;

    public long NowMs() => time.GetUtcNow().ToUnixTimeMilliseconds() + Interlocked.Read(ref _clockOffsetMs);

    public StoreInstant Now() => new(time.GetUtcNow().UtcDateTime.AddMilliseconds(Interlocked.Read(ref _clockOffsetMs)));
}
