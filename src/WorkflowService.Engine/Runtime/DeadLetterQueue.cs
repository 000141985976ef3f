using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>Signals whose processing failed after every retry, and their replay, within one tenant.</summary>
public sealed class DeadLetterQueue(ISignalQueue signals, IInstanceStore instances, IOperatorQueries queries, IStoreClock clock, WaitPointWriter writer)
{
    public Task<Page<SignalMessage>> ListAsync(string tenant, int offset, int limit, CancellationToken cancellationToken) =>
        queries.ListDeadLettersAsync(tenant, offset, limit, cancellationToken);

    /// <summary>
    /// Queues the signal again with fresh attempts; a faulted instance goes back to its wait. A signal of another tenant's
    /// instance is not found. With an <paramref name="idempotencyKey"/>, a repeated request is the same replay: it answers
    /// Replayed again and replays nothing more, even when its first attempt's answer was lost and the signal has failed
    /// into the dead letters again since.
    /// </summary>
    public async Task<ReplayOutcome> ReplayAsync(string tenant, Guid signalId, string? actor, string? idempotencyKey, CancellationToken cancellationToken)
    {
        if (idempotencyKey is not null && await ReplayedWithKeyAsync(tenant, signalId, idempotencyKey, cancellationToken).ConfigureAwait(false))
        {
            return ReplayOutcome.Replayed;
        }

        var replayed = new HistoryEvent
        {
            Actor = actor,
            Type = HistoryEventTypes.InstanceReplayed,
            // The store dates it again when the replay commits (never before the instance's last commit).
            At = clock.Now().UtcDateTime,
            DataJson = JsonSerializer.Serialize(new ReplayData(signalId, idempotencyKey), EngineJson.Options),
        };
        var outcome = await writer.ReplayDeadLetterAsync(signalId, tenant, replayed, cancellationToken).ConfigureAwait(false);
        if (outcome == ReplayOutcome.NotDeadLettered && idempotencyKey is not null
                 && await ReplayedWithKeyAsync(tenant, signalId, idempotencyKey, cancellationToken).ConfigureAwait(false))
        {
            // The same request, sent twice at once: the other one replayed it.
            return ReplayOutcome.Replayed;
        }

        return outcome;
    }

    /// <summary>Whether the signal's instance (of this tenant) records a replay of it under this key.</summary>
    private async Task<bool> ReplayedWithKeyAsync(string tenant, Guid signalId, string idempotencyKey, CancellationToken cancellationToken)
    {
        var signal = await signals.GetSignalAsync(tenant, signalId, cancellationToken).ConfigureAwait(false);
        if (signal is null || await instances.GetInstanceAsync(tenant, signal.InstanceId, cancellationToken).ConfigureAwait(false) is not { } instance)
        {
            return false;
        }

        var history = await instances.GetHistoryAsync(instance, cancellationToken).ConfigureAwait(false);
        return history.Any(e => e.Type == HistoryEventTypes.InstanceReplayed && e.DataJson is { } data
            && JsonSerializer.Deserialize<ReplayData>(data, EngineJson.Options) is { } replay
            && replay.SignalId == signalId && replay.IdempotencyKey == idempotencyKey);
    }

    /// <summary>The data of an InstanceReplayed history event.</summary>
    private sealed record ReplayData(Guid SignalId, string? IdempotencyKey);
}
