using WorkflowService.Engine.Persistence;
using WorkflowService.Providers.Storage;

namespace WorkflowService.Storage.Relational;

/// <summary>The store's clock (<see cref="IStoreClock"/>): this process's, corrected by its distance to the database's.</summary>
public sealed partial class RelationalWorkflowStore : IStoreClock
{
    private readonly DatabaseClock _clock = new(time);

    public long NowMs() => _clock.NowMs();

    public StoreInstant Now() => _clock.Now();
}
