using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Applies a signal where it arrives: when its instance waits for it, unsuspended, with nothing else of it queued and
/// due, the receiving node runs the instance to its next wait point and commits once, the signal's row written as
/// handled in that same commit. Anything else goes the queued way (<see cref="TryApplyAsync"/> answers null), where
/// every guarantee of the signal queue holds: the ledger, idempotency keys, parking, retries and dead letters.
/// </summary>
/// <remarks>
/// The bounds, as Temporal bounds its eager dispatch: only an instance this node can run now (its state from this node's
/// last commit of it, else one read), only a run that succeeds at once, and only a commit that proves, in its own
/// statement, that the instance did not change since and that no signal of it is due and unhandled (the store's
/// <see cref="WaitPointCommit.RequireNoDueSignals"/>): a signal queued earlier, a timer due, or one a worker holds keeps
/// this one in the queue behind it.
/// </remarks>
public sealed partial class SignalsOnArrival(
    IInstanceStore instances,
    IStoreClock clock,
    DefinitionRegistry definitions,
    WorkflowExecutor executor,
    WaitPointWriter writer,
    RecentInstances recent,
    NodeIdentity node,
    EngineMetrics metrics,
    IOptions<EngineOptions> options,
    ILogger<SignalsOnArrival> logger)
{
    private readonly bool _enabled = options.Value.ApplySignalsOnArrival && instances.GuardsDueSignals;

    /// <summary>
    /// The signal as committed (handled) when it was applied on arrival; null when it must be queued instead (nothing was
    /// written).
    /// </summary>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Any failure of the run falls back to the queue, which keeps the signal through retries and a dead letter; the caller's answer must not depend on what the run met.")]
    public async Task<SignalMessage?> TryApplyAsync(SignalMessage signal, string tenant, CancellationToken cancellationToken)
    {
        if (!_enabled || signal.IsSystem || signal.DueAtMs > clock.NowMs())
        {
            return null;
        }

        var started = Stopwatch.GetTimestamp();
        var instance = recent.Find(signal.InstanceId)
            ?? await instances.GetInstanceAsync(tenant, signal.InstanceId, cancellationToken).ConfigureAwait(false);
        if (instance is null || instance.Tenant != tenant || instance.Status != InstanceStatus.Waiting || instance.ParkedSignals > 0)
        {
            return null;
        }

        using var span = EngineTelemetry.StartRunOnArrival(signal, node.Id);
        var now = clock.Now();
        RunResult run;
        try
        {
            var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken)
                .ConfigureAwait(false);
            if (definition is null)
            {
                return null;
            }

            run = executor.Resume(definition, instance, signal, [], now);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Whatever the run met, the queue is where a signal is kept through it: the worker retries it and, in the end,
            // dead-letters it with the reason, as it would have without this path.
            LogFellBack(logger, e, signal.Id, signal.InstanceId);
            return null;
        }

        // A run that fails, or a signal the instance does not wait for (it would be parked), goes the queued way: the
        // worker's attempts, backoff and dead letter apply to it as to any signal.
        if (run.Commit is not { } commit
            || commit.SignalTransitions.FindIndex(t => t.SignalId == signal.Id) is var applied && applied < 0
            || commit.SignalTransitions[applied].Status != SignalStatus.Handled)
        {
            return null;
        }

        commit.SignalTransitions.RemoveAt(applied);
        signal.Status = SignalStatus.Handled;
        signal.HandledAt = now.UtcDateTime;
        signal.Attempts = 1;
        commit.NewSignals.Insert(0, signal);
        commit.RequireNoDueSignals = true;
        commit.Actor = signal.Actor;
        try
        {
            await writer.CommitAsync(commit, static s => s.Metrics.SignalHandled(Stopwatch.GetElapsedTime(s.Started).TotalMilliseconds),
                (Metrics: metrics, Started: started), cancellationToken).ConfigureAwait(false);
        }
        catch (ConcurrencyConflictException)
        {
            // The instance moved on since it was read, a signal of it is due or held, or the idempotency key was used:
            // nothing was written, and the queue decides.
            recent.Forget(signal.InstanceId);
            signal.Status = SignalStatus.Pending;
            signal.HandledAt = null;
            signal.Attempts = 0;
            metrics.AppliedOnArrivalFellBack();
            span?.SetTag("workflow.signal.queued", true);
            return null;
        }

        EngineTelemetry.Ran(commit);
        metrics.AppliedOnArrival();
        return signal;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Signal {SignalId} for instance {InstanceId} could not be applied on arrival; it is queued for a worker")]
    private static partial void LogFellBack(ILogger logger, Exception exception, Guid signalId, Guid instanceId);
}
