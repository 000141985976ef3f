using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>Signals whose processing failed after every retry, and their replay, within one tenant.</summary>
public sealed class DeadLetterQueue(ISignalQueue signals, IOperatorQueries queries, IStoreClock clock, WaitPointWriter writer)
{
    public Task<Page<SignalMessage>> ListAsync(string tenant, int offset, int limit, CancellationToken cancellationToken) =>
        queries.ListDeadLettersAsync(tenant, offset, limit, cancellationToken);

    /// <summary>
    /// Queues the signal again with fresh attempts; a faulted instance goes back to its wait. A signal of another tenant's
    /// instance is not found.
    /// </summary>
    public async Task<ReplayOutcome> ReplayAsync(string tenant, Guid signalId, string? actor, CancellationToken cancellationToken)
    {
        var replayed = new HistoryEvent
        {
            Actor = actor,
            Type = HistoryEventTypes.InstanceReplayed,
            // The store dates it again when the replay commits (never before the instance's last commit).
            At = clock.Now().UtcDateTime,
            DataJson = $"{{\"signalId\":\"{signalId}\"}}",
        };
        var outcome = await signals.ReplayDeadLetterAsync(signalId, tenant, replayed, cancellationToken).ConfigureAwait(false);
        if (outcome == ReplayOutcome.Replayed)
        {
            writer.SignalQueued(clock.NowMs());
        }

        return outcome;
    }
}
