using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>The store's clock (<see cref="IStoreClock"/>): this process's, corrected by its distance to the primary's.</summary>
public sealed partial class MongoWorkflowStore : IStoreClock
{
    public long NowMs() => _clock.NowMs();

    public StoreInstant Now() => _clock.Now();
}
