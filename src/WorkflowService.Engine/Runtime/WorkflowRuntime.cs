using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>A request to start an instance of <paramref name="Tenant"/>'s definition ("" is the default tenant).</summary>
public sealed record StartRequest(string DefinitionName, int? Version, string? InputJson, string? BusinessKey, string? IdempotencyKey,
    Guid? ParentInstanceId = null, Guid? ParentWaitId = null, string? Actor = null, string Tenant = "");

public enum StartOutcome { Created, Existing, DefinitionNotFound }

public sealed record StartResult(StartOutcome Outcome, WorkflowInstance? Instance);

/// <summary>A signal for an instance of <paramref name="Tenant"/>; an instance of another tenant is not found.</summary>
public sealed record SignalRequest(Guid InstanceId, string Name, string? PayloadJson, DateTimeOffset? DueAt, string? IdempotencyKey,
    string? Actor = null, string Tenant = "");

/// <summary>How a signal was taken: applied at once by the receiving node, queued for a worker, or refused.</summary>
public enum SignalOutcome { Applied, Accepted, Duplicate, InstanceNotFound, InstanceEnded }

public sealed record SignalResult(SignalOutcome Outcome, SignalMessage? Signal, WorkflowInstance? Instance);

/// <summary>The outcome of an operator's state change (cancel, terminate, suspend, resume).</summary>
public enum StateChangeOutcome { Changed, NotFound, NotAllowed }

public sealed record StateChangeResult(StateChangeOutcome Outcome, WorkflowInstance? Instance);

/// <summary>The application side of the engine: start, signal and cancel instances, and wait for their state.</summary>
public sealed class WorkflowRuntime(
    IInstanceStore instances,
    IOperatorQueries queries,
    IStoreClock clock,
    DefinitionRegistry definitions,
    WorkflowExecutor executor,
    InstanceStarter starter,
    WaitPointWriter writer,
    InstanceChangeFeed changes,
    SignalsOnArrival onArrival,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<EngineOptions> engineOptions,
    IOptions<WorkerOptions> workerOptions)
{
    /// <summary>Runs the new instance to its first wait point in memory and writes it in one transaction.</summary>
    public Task<StartResult> StartAsync(StartRequest request, CancellationToken cancellationToken) =>
        starter.StartAsync(request, cancellationToken);

    /// <summary>
    /// Applies a signal to an instance that waits for it at once, in one commit (<see cref="SignalsOnArrival"/>); else
    /// queues it for a signal worker, never lost if it comes early. Queuing while the instance is open is one store round
    /// trip (the insert checks the instance); only a refused signal reads the instance.
    /// </summary>
    public async Task<SignalResult> SignalAsync(SignalRequest request, CancellationToken cancellationToken)
    {
        var now = clock.Now();
        var signal = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = request.InstanceId,
            Name = request.Name,
            PayloadJson = request.PayloadJson,
            Status = SignalStatus.Pending,
            DueAtMs = request.DueAt is { } due ? Math.Max(due.ToUnixTimeMilliseconds(), now.UnixMs) : now.UnixMs,
            IdempotencyKey = request.IdempotencyKey,
            Actor = request.Actor,
            CreatedAt = now.UtcDateTime,
            TraceParent = EngineTelemetry.CurrentTraceParent(),
        };

        if (await onArrival.TryApplyAsync(signal, request.Tenant, cancellationToken).ConfigureAwait(false) is { } applied)
        {
            metrics.SignalAccepted();
            return new SignalResult(SignalOutcome.Applied, applied, null);
        }

        var (stored, created) = await writer.QueueSignalIfOpenAsync(signal, request.Tenant, cancellationToken).ConfigureAwait(false);
        if (stored is not null)
        {
            if (!created)
            {
                return new SignalResult(SignalOutcome.Duplicate, stored, null);
            }

            metrics.SignalAccepted();
            return new SignalResult(SignalOutcome.Accepted, stored, null);
        }

        var instance = await instances.GetInstanceAsync(request.Tenant, request.InstanceId, cancellationToken).ConfigureAwait(false);
        if (instance is null)
        {
            return new SignalResult(SignalOutcome.InstanceNotFound, null, null);
        }

        // A repeated delivery of a signal that was accepted before the end is still answered as a duplicate.
        if (request.IdempotencyKey is not null)
        {
            var earlier = (await queries.ListSignalsAsync(instance, cancellationToken).ConfigureAwait(false))
                .FirstOrDefault(s => s.IdempotencyKey == request.IdempotencyKey);
            if (earlier is not null)
            {
                return new SignalResult(SignalOutcome.Duplicate, earlier, instance);
            }
        }

        return new SignalResult(SignalOutcome.InstanceEnded, null, instance);
    }

    /// <summary>
    /// Cancels cooperatively: the definition's cancel path runs (if it has one) and the instance ends cancelled; its
    /// timers, open tasks and unhandled signals are closed with it.
    /// </summary>
    public Task<StateChangeResult> CancelAsync(string tenant, Guid instanceId, string? reason, string? actor, CancellationToken cancellationToken) =>
        ChangeStateAsync(tenant, instanceId, actor, async instance =>
        {
            if (instance.Status.IsTerminal())
            {
                return null;
            }

            var definition = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken).ConfigureAwait(false);
            var now = clock.Now();
            var run = definition is null ? null : executor.CancelWithPath(definition, instance, reason, now);
            // A cancel path that fails cannot hold the cancel up: the instance is cancelled at once, with the reason.
            return run?.Commit ?? WorkflowExecutor.Cancel(instance, $"{reason} (cancel path failed: {run?.Error})", now);
        }, cancellationToken);

    /// <summary>Ends an instance at once, without its cancel path.</summary>
    public Task<StateChangeResult> TerminateAsync(string tenant, Guid instanceId, string? reason, string? actor, CancellationToken cancellationToken) =>
        ChangeStateAsync(tenant, instanceId, actor, instance => Task.FromResult(
            instance.Status.IsTerminal() ? null : WorkflowExecutor.Cancel(instance, reason, clock.Now(), terminated: true)), cancellationToken);

    /// <summary>Holds a waiting instance; nothing it receives is applied until it is resumed.</summary>
    public Task<StateChangeResult> SuspendAsync(string tenant, Guid instanceId, string? reason, string? actor, CancellationToken cancellationToken) =>
        ChangeStateAsync(tenant, instanceId, actor, instance => Task.FromResult(
            instance.Status == InstanceStatus.Waiting ? WorkflowExecutor.Suspend(instance, reason, clock.Now()) : null), cancellationToken);

    /// <summary>Releases a suspended instance; signals and timers that came meanwhile are applied in turn.</summary>
    public Task<StateChangeResult> ResumeAsync(string tenant, Guid instanceId, string? actor, CancellationToken cancellationToken) =>
        ChangeStateAsync(tenant, instanceId, actor, instance => Task.FromResult(
            instance.Status == InstanceStatus.Suspended ? WorkflowExecutor.Unsuspend(instance, clock.Now()) : null), cancellationToken);

    /// <summary>
    /// Reads the instance, asks <paramref name="change"/> for a commit (null: not allowed in its current state) and
    /// writes it, repeating on a concurrency conflict. An instance of another tenant than <paramref name="tenant"/> is not
    /// found, and nothing changes.
    /// </summary>
    private async Task<StateChangeResult> ChangeStateAsync(string tenant, Guid instanceId, string? actor,
        Func<WorkflowInstance, Task<WaitPointCommit?>> change, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            var instance = await instances.GetInstanceAsync(tenant, instanceId, cancellationToken).ConfigureAwait(false);
            if (instance is null)
            {
                return new StateChangeResult(StateChangeOutcome.NotFound, null);
            }

            var commit = await change(instance).ConfigureAwait(false);
            if (commit is null)
            {
                return new StateChangeResult(StateChangeOutcome.NotAllowed, instance);
            }

            commit.Actor = actor;
            try
            {
                await writer.CommitAsync(commit, cancellationToken).ConfigureAwait(false);

                return new StateChangeResult(StateChangeOutcome.Changed, commit.Instance);
            }
            catch (ConcurrencyConflictException) when (attempt < engineOptions.Value.MaxConflictRetries)
            {
                metrics.Conflict();
            }
        }
    }

    /// <summary>
    /// Returns the instance once its status is one of <paramref name="statuses"/> (or it can no longer change by
    /// itself), or when <paramref name="timeout"/> ends. Woken by this node's commits and by
    /// <see cref="InstanceChangeWatcher"/>'s periodic read of every watched instance (other nodes' commits): a waiting
    /// long-poll reads the store only when its instance changed. Null at once when there is no such instance in
    /// <paramref name="tenant"/> (an instance of another tenant is neither waited for nor returned).
    /// </summary>
    public Task<WorkflowInstance?> WaitForStatusAsync(string tenant, Guid instanceId, IReadOnlySet<InstanceStatus> statuses,
        TimeSpan timeout, CancellationToken cancellationToken) =>
        WaitUntilAsync(tenant, instanceId, i => Satisfies(i, statuses), timeout, cancellationToken);

    /// <summary>
    /// Returns the instance once it has committed a version after <paramref name="afterVersion"/>, or its current state
    /// when <paramref name="timeout"/> ends (what a page that shows the instance waits on to redraw). Null at once when
    /// there is no such instance in <paramref name="tenant"/>.
    /// </summary>
    public Task<WorkflowInstance?> WaitForChangeAsync(string tenant, Guid instanceId, int afterVersion, TimeSpan timeout,
        CancellationToken cancellationToken) =>
        WaitUntilAsync(tenant, instanceId, i => i.Version > afterVersion, timeout, cancellationToken);

    private async Task<WorkflowInstance?> WaitUntilAsync(string tenant, Guid instanceId, Func<WorkflowInstance, bool> done,
        TimeSpan timeout, CancellationToken cancellationToken)
    {
        var options = workerOptions.Value;
        if (timeout > options.MaxLongPoll)
        {
            timeout = options.MaxLongPoll;
        }

        var deadline = time.GetTimestamp() + (long)(timeout.TotalSeconds * time.TimestampFrequency);
        var change = changes.NextChange(instanceId);
        try
        {
            var instance = await instances.GetInstanceAsync(tenant, instanceId, cancellationToken).ConfigureAwait(false);
            while (instance is not null && !done(instance))
            {
                changes.Observed(instanceId, change, instance.Version);
                var remaining = time.GetElapsedTime(time.GetTimestamp(), deadline);
                if (remaining <= TimeSpan.Zero)
                {
                    return instance;
                }

                WorkflowInstance? changed;
                try
                {
                    changed = await change.WaitAsync(remaining, time, cancellationToken).ConfigureAwait(false);
                }
                catch (TimeoutException)
                {
                    // The last word at the deadline is the store's (a change may be under a period old).
                    return await instances.GetInstanceAsync(tenant, instanceId, cancellationToken).ConfigureAwait(false);
                }

                // The changed state is handed over: when it is the awaited one (or the instance is gone), no read is needed.
                change = changes.NextChange(instanceId);
                if (changed is not null && changed.Version <= instance.Version)
                {
                    // Not news to this waiter (a read that began before the state it holds, a late publish).
                    continue;
                }

                instance = changed is null || done(changed)
                    ? changed
                    : await instances.GetInstanceAsync(tenant, instanceId, cancellationToken).ConfigureAwait(false);
            }

            return instance;
        }
        finally
        {
            changes.Forget(instanceId, change);
        }
    }

    /// <summary>The awaited status, or one the instance cannot leave by itself.</summary>
    private static bool Satisfies(WorkflowInstance instance, IReadOnlySet<InstanceStatus> statuses) =>
        statuses.Contains(instance.Status) || instance.Status.IsTerminal() || instance.Status == InstanceStatus.Faulted;
}
