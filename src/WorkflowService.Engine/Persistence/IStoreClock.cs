namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The store's clock: "now" for due times, leases and timestamps, the same on every node that shares the store (the
/// database's clock where the store has one).
/// </summary>
public interface IStoreClock
{
    /// <summary>The store's clock, in Unix milliseconds.</summary>
    long NowMs();

    /// <summary>The store's clock as an instant, at its full precision: what the engine passes to a run.</summary>
    StoreInstant Now();
}
