using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>Signals whose processing failed after every retry, and their replay.</summary>
public sealed class DeadLetterQueue(ISignalQueue signals, IOperatorQueries queries, IStoreClock clock, WaitPointWriter writer)
{
    public Task<Page<SignalMessage>> ListAsync(int offset, int limit, CancellationToken cancellationToken) =>
        queries.ListDeadLettersAsync(offset, limit, cancellationToken);

    /// <summary>Queues the signal again with fresh attempts; a faulted instance goes back to its wait.</summary>
    public async Task<ReplayOutcome> ReplayAsync(Guid signalId, string? actor, CancellationToken cancellationToken)
    {
        var replayed = new HistoryEvent
        {
            Actor = actor,
            Type = HistoryEventTypes.InstanceReplayed,
            At = clock.Now().UtcDateTime,
            DataJson = $"{{\"signalId\":\"{signalId}\"}}",
        };
        var outcome = await signals.ReplayDeadLetterAsync(signalId, replayed, cancellationToken).ConfigureAwait(false);
        if (outcome == ReplayOutcome.Replayed)
        {
            writer.SignalQueued(clock.NowMs());
        }

        return outcome;
    }
}
