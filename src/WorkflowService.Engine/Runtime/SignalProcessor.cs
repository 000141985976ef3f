using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>Applies one claimed signal: load the instance, run it to its next wait point, commit once.</summary>
public sealed partial class SignalProcessor(
    IInstanceStore instances,
    ISignalQueue signals,
    IStoreClock clock,
    DefinitionRegistry definitions,
    WorkflowExecutor executor,
    InstanceStarter starter,
    WaitPointWriter writer,
    ICallOutClient callOuts,
    EngineMetrics metrics,
    IOptions<EngineOptions> options,
    ILogger<SignalProcessor> logger)
{
    /// <summary>Applies <paramref name="signal"/>; <paramref name="snapshot"/>, when given, is its instance as read after the claim.</summary>
    public async Task ProcessAsync(SignalMessage signal, WorkflowInstance? snapshot, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var engine = options.Value;
        // A call-out is made once per claim, even when the commit has to be repeated after a conflict.
        (string? Response, string? Error)? callOut = null;
        if (await ChildStartUnrecordedAsync(signal, cancellationToken).ConfigureAwait(false))
        {
            // The child ended before its parent recorded that it started (the worker starting it has not committed yet):
            // wait for that commit, so that the parent's history reads in the order things happened. Bounded by the
            // start signal's own lease and attempt limit: once it is handled or dead-lettered, this signal goes ahead. The
            // claim is not counted as an attempt: nothing was tried.
            var later = clock.Now().After(engine.BackoffFor(1));
            await signals.DeferSignalAsync(signal.Id, signal.LeaseToken, later, cancellationToken).ConfigureAwait(false);
            writer.SignalQueued(later);
            return;
        }

        for (var attempt = 0; attempt <= engine.MaxConflictRetries; attempt++)
        {
            var instance = attempt == 0 && snapshot is not null
                ? snapshot
                : await instances.GetInstanceForEngineAsync(signal.InstanceId, cancellationToken).ConfigureAwait(false);
            if (instance is null)
            {
                await signals.DeadLetterSignalAsync(signal.Id, signal.LeaseToken, $"instance {signal.InstanceId} does not exist", cancellationToken)
                    .ConfigureAwait(false);
                metrics.DeadLettered();
                return;
            }

            var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken).ConfigureAwait(false);
            if (definition is null)
            {
                await signals.DeadLetterSignalAsync(signal.Id, signal.LeaseToken,
                    $"definition {instance.DefinitionName} v{instance.DefinitionVersion} does not exist", cancellationToken).ConfigureAwait(false);
                metrics.DeadLettered();
                return;
            }

            var parked = instance.ParkedSignals > 0
                ? await signals.GetParkedSignalsAsync(instance.Id, cancellationToken).ConfigureAwait(false)
                : [];
            var now = clock.Now();
            RunResult run;
            if (IsPendingCallOut(instance, signal))
            {
                callOut ??= await CallOutAsync(signal, cancellationToken).ConfigureAwait(false);
                run = ResumeAfterCallOut(definition, instance, signal, parked, callOut.Value, now);
            }
            else if (IsPendingSubWorkflow(instance, signal))
            {
                run = await StartChildAsync(instance, signal, now, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                run = executor.Resume(definition, instance, signal, parked, now);
            }

            WaitPointCommit commit;
            if (run.Commit is not null)
            {
                commit = run.Commit;
            }
            else if (signal.Attempts < engine.MaxAttempts)
            {
                var retryAt = clock.Now().After(engine.BackoffFor(signal.Attempts));
                LogRetry(logger, signal.Id, instance.Id, signal.Attempts, engine.MaxAttempts, run.Error);
                await signals.ReleaseSignalAsync(signal.Id, signal.LeaseToken, retryAt, run.Error, cancellationToken).ConfigureAwait(false);
                writer.SignalQueued(retryAt);
                metrics.Retried();
                return;
            }
            else
            {
                LogFaulted(logger, instance.Id, signal.Id, signal.Attempts, run.Error);
                commit = WorkflowExecutor.Fault(instance, signal, run.Error ?? "failed", now);
                metrics.DeadLettered();
            }

            commit.Actor = signal.Actor;
            try
            {
                // Counted before waiters hear of the commit: a client that saw the instance move sees the count too.
                await writer.CommitAsync(commit, static s => s.Metrics.SignalHandled(Stopwatch.GetElapsedTime(s.Started).TotalMilliseconds),
                    (Metrics: metrics, Started: started), cancellationToken).ConfigureAwait(false);
                EngineTelemetry.Ran(commit);
                return;
            }
            catch (ConcurrencyConflictException)
            {
                metrics.Conflict();
                // Run again only while the claim still holds: if the signal was handled meanwhile (another worker after
                // our lease expired, or our own commit whose acknowledgement was lost), applying it again would repeat it.
                var current = await signals.GetSignalForEngineAsync(signal.Id, cancellationToken).ConfigureAwait(false);
                if (current is null || current.Status != SignalStatus.Pending || current.LeaseToken != signal.LeaseToken)
                {
                    return;
                }
            }
            catch (LeaseLostException)
            {
                LogLeaseLost(logger, signal.Id);
                return;
            }
        }

        // Persistent contention: hand the signal back so that it is retried shortly rather than dropped.
        await signals.ReleaseSignalAsync(signal.Id, signal.LeaseToken, clock.Now().After(engine.BackoffFor(1)),
            "too many concurrent changes to the instance", cancellationToken).ConfigureAwait(false);
    }

    private async Task<bool> ChildStartUnrecordedAsync(SignalMessage signal, CancellationToken cancellationToken) =>
        signal.Name == SignalMessage.ChildEndedSignal
        && signal.ParentWaitId is { } startSignalId
        && await signals.GetSignalForEngineAsync(startSignalId, cancellationToken).ConfigureAwait(false) is { Status: SignalStatus.Pending };

    /// <summary>Starts the child of a subWorkflow step; the parent keeps waiting for the child's end.</summary>
    private async Task<RunResult> StartChildAsync(WorkflowInstance parent, SignalMessage signal, StoreInstant now, CancellationToken cancellationToken)
    {
        var request = System.Text.Json.JsonSerializer.Deserialize<SubWorkflowRequest>(signal.PayloadJson!, EngineJson.Options)!;
        // Keyed by the $subflow signal, so a repeated attempt finds the child instead of starting a second one. The child
        // runs in its parent's tenant, with that tenant's definition.
        var child = await starter.StartAsync(new StartRequest(request.Definition, request.Version, request.InputJson, null,
            $"subflow-{signal.Id}", parent.Id, signal.Id, Tenant: parent.Tenant), cancellationToken).ConfigureAwait(false);
        return child.Instance is { } started
            ? RunResult.Success(WorkflowExecutor.ChildStarted(parent, signal, started.Id, now))
            : RunResult.Failure(WorkflowExecutor.StepAwaiting(parent, signal.Id, WaitKind.SubWorkflow),
                $"step '{WorkflowExecutor.StepAwaiting(parent, signal.Id, WaitKind.SubWorkflow)}': definition '{request.Definition}'{(request.Version is { } v ? $" v{v}" : "")} does not exist");
    }

    /// <summary>Resumes an http step with its response, or takes its error path (else the run fails) when the call failed.</summary>
    private RunResult ResumeAfterCallOut(Definitions.CompiledDefinition definition, WorkflowInstance instance, SignalMessage signal,
        IReadOnlyList<SignalMessage> parked, (string? Response, string? Error) callOut, StoreInstant now) =>
        callOut.Error is { } failure
            ? executor.ResumeAtErrorPath(definition, instance, signal, parked, failure, now)
              ?? RunResult.Failure(WorkflowExecutor.StepAwaiting(instance, signal.Id, WaitKind.CallOut),
                  $"step '{WorkflowExecutor.StepAwaiting(instance, signal.Id, WaitKind.CallOut)}': {failure}")
            : executor.Resume(definition, instance, signal.WithPayload(callOut.Response), parked, now);

    // The wait may be the instance's own or a parallel branch's.
    private static bool IsPendingSubWorkflow(WorkflowInstance instance, SignalMessage signal) =>
        signal.Name == SignalMessage.SubWorkflowSignal && WorkflowExecutor.StepAwaiting(instance, signal.Id, WaitKind.SubWorkflow) is not null;

    private static bool IsPendingCallOut(WorkflowInstance instance, SignalMessage signal) =>
        signal.Name == SignalMessage.CallOutSignal && WorkflowExecutor.StepAwaiting(instance, signal.Id, WaitKind.CallOut) is not null;

    private async Task<(string? Response, string? Error)> CallOutAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        try
        {
            var request = System.Text.Json.JsonSerializer.Deserialize<CallOutRequest>(signal.PayloadJson!, EngineJson.Options)!;
            return (await callOuts.SendAsync(request, cancellationToken).ConfigureAwait(false), null);
        }
        catch (CallOutFailedException e)
        {
            return (null, e.Message);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Signal {SignalId} for instance {InstanceId} failed (attempt {Attempt} of {MaxAttempts}), retrying: {Error}")]
    private static partial void LogRetry(ILogger logger, Guid signalId, Guid instanceId, int attempt, int maxAttempts, string? error);

    [LoggerMessage(Level = LogLevel.Error, Message = "Instance {InstanceId} faulted; signal {SignalId} dead-lettered after {Attempts} attempts: {Error}")]
    private static partial void LogFaulted(ILogger logger, Guid instanceId, Guid signalId, int attempts, string? error);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Lease on signal {SignalId} was lost; another worker owns it now")]
    private static partial void LogLeaseLost(ILogger logger, Guid signalId);
}
