using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>The store's clock (<see cref="IStoreClock"/>).</summary>
public sealed partial class MongoWorkflowStore : IStoreClock
{
    // The store's clock: this process's clock corrected by its distance to the primary's, measured at start-up
    // (MongoWorkflowStore.Schema.cs), so that every node agrees on when a signal is due.
    private long _clockOffsetMs;

    public long NowMs() => _time.GetUtcNow().ToUnixTimeMilliseconds() + Interlocked.Read(ref _clockOffsetMs);

    public StoreInstant Now() => new(_time.GetUtcNow().UtcDateTime.AddMilliseconds(Interlocked.Read(ref _clockOffsetMs)));
}
