using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
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
    /// <remarks>
    /// The steps that may wait on the store (<see cref="LoadAsync"/>, <see cref="RunAsync"/>) complete synchronously for
    /// a claimed instance whose definition is cached and that waits for a plain signal; otherwise they are pooled, so a
    /// signal allocates no state machine of its own for them. The commit is awaited here, on this method's own one.
    /// </remarks>
    public async Task ProcessAsync(SignalMessage signal, WorkflowInstance? snapshot, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        if (await ChildStartUnrecordedAsync(signal, cancellationToken).ConfigureAwait(false))
        {
            await DeferUntilChildStartRecordedAsync(signal, cancellationToken).ConfigureAwait(false);
            return;
        }

        // A call-out is made once per claim, even when the commit has to be repeated after a conflict.
        CallOutOutcome? callOut = null;
        for (var attempt = 0; attempt <= options.Value.MaxConflictRetries; attempt++)
        {
            var (instance, definition, parked) = await LoadAsync(signal, attempt == 0 ? snapshot : null, cancellationToken).ConfigureAwait(false);
            if (instance is null || definition is null)
            {
                await DeadLetterAsync(signal, instance, cancellationToken).ConfigureAwait(false);
                return;
            }

            var now = clock.Now();
            (var run, callOut) = await RunAsync(definition, instance, signal, parked, callOut, now, cancellationToken).ConfigureAwait(false);
            if (CommitOrFault(run, instance, signal, now) is not { } commit)
            {
                await RetryLaterAsync(signal, instance, run.Error, cancellationToken).ConfigureAwait(false);
                return;
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
                if (!StillClaimed(signal, await signals.GetSignalForEngineAsync(signal.Id, cancellationToken).ConfigureAwait(false)))
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

        await GiveBackAfterContentionAsync(signal, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// What a run needs: the instance (<paramref name="snapshot"/>, as the claim read it, else read now), its definition,
    /// and its parked signals; a null instance or definition when it does not exist.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<(WorkflowInstance? Instance, CompiledDefinition? Definition, IReadOnlyList<SignalMessage> Parked)> LoadAsync(
        SignalMessage signal, WorkflowInstance? snapshot, CancellationToken cancellationToken)
    {
        var instance = snapshot ?? await instances.GetInstanceForEngineAsync(signal.InstanceId, cancellationToken).ConfigureAwait(false);
        if (instance is null)
        {
            return (null, null, []);
        }

        var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken).ConfigureAwait(false);
        if (definition is null)
        {
            return (instance, null, []);
        }

        var parked = instance.ParkedSignals > 0
            ? await signals.GetParkedSignalsAsync(instance.Id, cancellationToken).ConfigureAwait(false)
            : [];
        return (instance, definition, parked);
    }

    /// <summary>
    /// Runs the instance to its next wait point in memory: an http step resumed with its response (called once per claim:
    /// <paramref name="callOut"/> carries the response of an earlier attempt), a subWorkflow step's child started, or
    /// the wait resumed with the signal.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<(RunResult Run, CallOutOutcome? CallOut)> RunAsync(CompiledDefinition definition, WorkflowInstance instance,
        SignalMessage signal, IReadOnlyList<SignalMessage> parked, CallOutOutcome? callOut, StoreInstant now, CancellationToken cancellationToken)
    {
        if (IsPendingCallOut(instance, signal))
        {
            callOut ??= await CallOutAsync(signal, cancellationToken).ConfigureAwait(false);
            return (ResumeAfterCallOut(definition, instance, signal, parked, callOut.Value, now), callOut);
        }

        var run = IsPendingSubWorkflow(instance, signal)
            ? await StartChildAsync(instance, signal, now, cancellationToken).ConfigureAwait(false)
            : executor.Resume(definition, instance, signal, parked, now);
        return (run, callOut);
    }

    /// <summary>
    /// What this attempt commits: the run's commit; after a failed run on the signal's last attempt, the instance faulted
    /// (the signal dead-lettered with it); null after a failed run with attempts left, when a retry is due.
    /// </summary>
    private WaitPointCommit? CommitOrFault(RunResult run, WorkflowInstance instance, SignalMessage signal, StoreInstant now)
    {
        if (run.Commit is not null)
        {
            return run.Commit;
        }

        if (signal.Attempts < options.Value.MaxAttempts)
        {
            return null;
        }

        LogFaulted(logger, instance.Id, signal.Id, signal.Attempts, run.Error);
        var faulted = WorkflowExecutor.Fault(instance, signal, run.Error ?? "failed", now);
        metrics.DeadLettered();
        return faulted;
    }

    /// <summary>
    /// Whether a signal whose commit met a conflict is still this claim's to run again (<paramref name="current"/>: the
    /// signal as stored now). If it was handled meanwhile (another worker after our lease expired, or our own commit
    /// whose acknowledgement was lost), applying it again would repeat it.
    /// </summary>
    private static bool StillClaimed(SignalMessage signal, SignalMessage? current) =>
        current is { Status: SignalStatus.Pending } && current.LeaseToken == signal.LeaseToken;

    /// <summary>Gives a signal whose run failed back for a retry after its backoff.</summary>
    private async Task RetryLaterAsync(SignalMessage signal, WorkflowInstance instance, string? error, CancellationToken cancellationToken)
    {
        var engine = options.Value;
        var retryAt = clock.Now().After(engine.BackoffFor(signal.Attempts));
        LogRetry(logger, signal.Id, instance.Id, signal.Attempts, engine.MaxAttempts, error);
        await writer.ReleaseSignalAsync(signal, retryAt, error, cancellationToken).ConfigureAwait(false);
        metrics.Retried();
    }

    /// <summary>Dead-letters a signal whose instance or definition does not exist.</summary>
    private async Task DeadLetterAsync(SignalMessage signal, WorkflowInstance? instance, CancellationToken cancellationToken)
    {
        var reason = instance is null
            ? $"instance {signal.InstanceId} does not exist"
            : $"definition {instance.DefinitionName} v{instance.DefinitionVersion} does not exist";
        await signals.DeadLetterSignalAsync(signal.Id, signal.LeaseToken, reason, cancellationToken).ConfigureAwait(false);
        metrics.DeadLettered();
    }

    /// <summary>
    /// The child ended before its parent recorded that it started (the worker starting it has not committed yet): waits
    /// for that commit, so that the parent's history reads in the order things happened. Bounded by the start signal's
    /// own lease and attempt limit: once it is handled or dead-lettered, this signal goes ahead. The claim is not counted
    /// as an attempt: nothing was tried.
    /// </summary>
    private Task<bool> DeferUntilChildStartRecordedAsync(SignalMessage signal, CancellationToken cancellationToken) =>
        writer.DeferSignalAsync(signal, clock.Now().After(options.Value.BackoffFor(1)), cancellationToken);

    /// <summary>
    /// Persistent contention: hands the signal back so that it is retried shortly rather than dropped (announced, like
    /// every write that queues a signal, so that the retry is not left to the next poll).
    /// </summary>
    private Task<bool> GiveBackAfterContentionAsync(SignalMessage signal, CancellationToken cancellationToken) =>
        writer.ReleaseSignalAsync(signal, clock.Now().After(options.Value.BackoffFor(1)), "too many concurrent changes to the instance",
            cancellationToken);

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
    private RunResult ResumeAfterCallOut(CompiledDefinition definition, WorkflowInstance instance, SignalMessage signal,
        IReadOnlyList<SignalMessage> parked, CallOutOutcome callOut, StoreInstant now) =>
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

    private async Task<CallOutOutcome> CallOutAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        try
        {
            var request = System.Text.Json.JsonSerializer.Deserialize<CallOutRequest>(signal.PayloadJson!, EngineJson.Options)!;
            return new(await callOuts.SendAsync(request, cancellationToken).ConfigureAwait(false), null);
        }
        catch (CallOutFailedException e)
        {
            return new(null, e.Message);
        }
    }

    /// <summary>An http step's call: its response, or why it failed.</summary>
    private readonly record struct CallOutOutcome(string? Response, string? Error);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Signal {SignalId} for instance {InstanceId} failed (attempt {Attempt} of {MaxAttempts}), retrying: {Error}")]
    private static partial void LogRetry(ILogger logger, Guid signalId, Guid instanceId, int attempt, int maxAttempts, string? error);

    [LoggerMessage(Level = LogLevel.Error, Message = "Instance {InstanceId} faulted; signal {SignalId} dead-lettered after {Attempts} attempts: {Error}")]
    private static partial void LogFaulted(ILogger logger, Guid instanceId, Guid signalId, int attempts, string? error);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Lease on signal {SignalId} was lost; another worker owns it now")]
    private static partial void LogLeaseLost(ILogger logger, Guid signalId);
}
