using System.Globalization;
using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Execution;

/// <summary>
/// Runs an instance in memory from a trigger (its start, or a signal) to its next wait point or its end, and describes
/// the result as one <see cref="WaitPointCommit"/>. It touches no store: persisting is the caller's single write.
/// </summary>
public sealed partial class WorkflowExecutor(ExpressionRuntime expressions, IOptions<EngineOptions> options, TimeProvider time)
{
    private readonly EngineOptions _options = options.Value;
    private readonly long _runBudget = (long)(options.Value.MaxRunTime.TotalSeconds * time.TimestampFrequency);

    /// <summary>An http step's timeout per attempt when it names none.</summary>
    public static readonly TimeSpan DefaultCallOutTimeout = TimeSpan.FromSeconds(10);

    /// <summary>An http step's retries when it names none.</summary>
    public const int DefaultCallOutRetries = 2;

    public RunResult Start(CompiledDefinition definition, WorkflowInstance instance, StoreInstant now)
    {
        var commit = new WaitPointCommit { Instance = instance, ExpectedVersion = -1 };
        Append(commit, now, HistoryEventTypes.InstanceStarted, null,
            new { definition = definition.Name, version = definition.Version, businessKey = instance.BusinessKey });
        return Run(definition, commit, definition.StartStepId, null, [], now, first: true);
    }

    /// <summary>Runs the start of an instance whose first run failed and is retried by its $start signal.</summary>
    public RunResult RetryStart(CompiledDefinition definition, WorkflowInstance instance, SignalMessage trigger,
        IReadOnlyList<SignalMessage> parked, StoreInstant now)
    {
        var commit = NewCommit(instance, now);
        commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Handled, trigger.LeaseToken));
        return Run(definition, commit, definition.StartStepId, null, parked, now, first: true);
    }

    /// <summary>
    /// The search attributes of <paramref name="definition"/> over <paramref name="instance"/> as it stands (those
    /// <paramref name="due"/> takes, else every one), on an engine of their own with <c>Engine:MaxRunTime</c>; null when
    /// there are none. What a start whose first run failed stores (a filter finds the instance while its start is retried,
    /// and after it is cancelled or faults without a run that ended), and what a migration settles.
    /// </summary>
    public IReadOnlyList<Search.SearchAttributeValue>? SearchValues(CompiledDefinition definition, WorkflowInstance instance,
        Func<ExpressionReads, bool>? due = null)
    {
        ArgumentNullException.ThrowIfNull(definition);
        ArgumentNullException.ThrowIfNull(instance);
        if (definition.SearchAttributes.Count == 0)
        {
            return null;
        }

        var scope = expressions.OpenScope(instance.VariablesJson, instance.InputJson, null, () => InstanceJson(instance));
        scope.LimitTo(_options.MaxRunTime);
        return Search.SearchAttributeEvaluation.Evaluate(definition.SearchAttributes, scope, due ?? (static _ => true));
    }

    /// <summary>Applies a claimed signal to the instance: resume its wait, park the signal, or close it as unmatched.</summary>
    public RunResult Resume(CompiledDefinition definition, WorkflowInstance instance, SignalMessage trigger,
        IReadOnlyList<SignalMessage> parked, StoreInstant now)
    {
        var commit = NewCommit(instance, now);
        var state = commit.Instance;

        if (state.Status.IsTerminal())
        {
            CloseUnmatched(commit, trigger, now, trigger.LeaseToken);
            return RunResult.Success(commit);
        }

        if (trigger.Name == SignalMessage.StartSignal && state.Status == InstanceStatus.Running && state.WaitKind is null)
        {
            return RetryStart(definition, instance, trigger, parked, now);
        }

        var found = state.Status == InstanceStatus.Waiting ? FindWait(state, w => MatchWait(definition, w, trigger) is not null) : null;
        if (found is null)
        {
            if (trigger.IsSystem && state.Status != InstanceStatus.Suspended)
            {
                // A timer whose wait is already over: nothing will ever wait for it again.
                commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Cancelled, trigger.LeaseToken));
            }
            else
            {
                state.ParkedSignals++;
                commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Parked, trigger.LeaseToken));
                Append(commit, now, HistoryEventTypes.SignalParked, state.WaitStepId, new { signal = trigger.Name, signalId = trigger.Id });
            }

            return RunResult.Success(commit);
        }

        var (wait, branch) = found.Value;
        var resumeAt = MatchWait(definition, wait, trigger)!.Value;
        var waitStep = definition.Step(wait.StepId);
        commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Handled, trigger.LeaseToken));
        string? payload = null;
        switch (resumeAt.How)
        {
            case ResumeKind.Signal:
                payload = trigger.PayloadJson;
                Append(commit, now, HistoryEventTypes.SignalReceived, waitStep.Id, new { signal = trigger.Name, signalId = trigger.Id });
                if (wait.TimerId is { } timer)
                {
                    commit.SignalTransitions.Add(new SignalTransition(timer, SignalStatus.Cancelled, null));
                }

                break;
            case ResumeKind.Timeout:
                Append(commit, now, HistoryEventTypes.TimedOut, waitStep.Id, new { signal = (waitStep as WaitForSignalStep)?.Signal });
                break;
            case ResumeKind.Timer:
                Append(commit, now, HistoryEventTypes.TimerFired, waitStep.Id, null);
                break;
            case ResumeKind.Task:
                payload = trigger.PayloadJson;
                Append(commit, now, HistoryEventTypes.TaskCompleted, waitStep.Id, new { taskId = trigger.TaskId });
                break;
            case ResumeKind.CallOut:
                // The processor put the response in place of the request.
                payload = trigger.PayloadJson;
                Append(commit, now, HistoryEventTypes.CallOutCompleted, waitStep.Id, null);
                break;
            case ResumeKind.Child:
                payload = trigger.PayloadJson;
                Append(commit, now, HistoryEventTypes.SubWorkflowEnded, waitStep.Id, null);
                break;
        }

        var output = resumeAt.How is ResumeKind.Signal or ResumeKind.Task or ResumeKind.CallOut or ResumeKind.Child ? (waitStep as IOutputStep)?.Output : null;
        return Continue(definition, commit, branch, resumeAt.Next, (payload, output), parked, now);
    }

    /// <summary>
    /// A call-out that failed for good at a step with an error path: the signal is handled and the run continues at
    /// the step's <c>onError</c>. Null when the step has no error path (the failure then counts as a failed run).
    /// </summary>
    public RunResult? ResumeAtErrorPath(CompiledDefinition definition, WorkflowInstance instance, SignalMessage trigger,
        IReadOnlyList<SignalMessage> parked, string error, StoreInstant now)
    {
        var found = FindWait(instance, w => w.Kind == WaitKind.CallOut && w.CallOutId == trigger.Id);
        if (found is not { } match || !definition.Steps.TryGetValue(match.Wait.StepId, out var step)
            || step is not IErrorHandlingStep { OnError: { } onError })
        {
            return null;
        }

        var commit = NewCommit(instance, now);
        commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Handled, trigger.LeaseToken, error));
        Append(commit, now, HistoryEventTypes.StepFailed, step.Id, new { error, next = onError.Next });
        (string? Payload, string? Output)? problem = onError.Output is null
            ? null
            : (JsonSerializer.Serialize(new { step = step.Id, message = error }, EngineJson.Options), onError.Output);
        return Continue(definition, commit, match.Branch, onError.Next, problem, parked, now);
    }

    /// <summary>
    /// The step whose wait of <paramref name="kind"/> is on the engine's own signal <paramref name="signalId"/> (a
    /// call-out or a child start), of the instance or of one of its parallel branches; null when no wait is on it.
    /// </summary>
    public static string? StepAwaiting(WorkflowInstance instance, Guid signalId, WaitKind kind) =>
        instance.Status == InstanceStatus.Waiting ? FindWait(instance, w => w.Kind == kind && w.SignalId == signalId)?.Wait.StepId : null;

    /// <summary>The commit that faults an instance after its last failed attempt and dead-letters the signal.</summary>
    public static WaitPointCommit Fault(WorkflowInstance instance, SignalMessage trigger, string error, StoreInstant now)
    {
        var commit = NewCommit(instance, now);
        commit.Instance.Status = InstanceStatus.Faulted;
        commit.Instance.Error = error;
        commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.DeadLettered, trigger.LeaseToken, error));
        Append(commit, now, HistoryEventTypes.InstanceFaulted, commit.Instance.WaitStepId,
            new { error, signal = trigger.Name, signalId = trigger.Id, attempts = trigger.Attempts });
        return commit;
    }

    /// <summary>Holds a waiting instance: signals that arrive are parked, timers too, until it is resumed.</summary>
    public static WaitPointCommit Suspend(WorkflowInstance instance, string? reason, StoreInstant now)
    {
        var commit = NewCommit(instance, now);
        commit.Instance.Status = InstanceStatus.Suspended;
        Append(commit, now, HistoryEventTypes.InstanceSuspended, commit.Instance.WaitStepId, new { reason });
        return commit;
    }

    /// <summary>Releases a suspended instance back to its wait; what arrived meanwhile is queued again and applied in turn.</summary>
    public static WaitPointCommit Unsuspend(WorkflowInstance instance, StoreInstant now)
    {
        var commit = NewCommit(instance, now);
        commit.Instance.Status = InstanceStatus.Waiting;
        commit.Instance.ParkedSignals = 0;
        commit.RequeueParked = true;
        Append(commit, now, HistoryEventTypes.InstanceResumed, commit.Instance.WaitStepId, null);
        return commit;
    }

    /// <summary>
    /// A cooperative cancel: runs the definition's cancel path (which ends without waiting) and ends the instance as
    /// cancelled, with the path's result as output. Without a cancel path it is the same as <see cref="Cancel"/>.
    /// </summary>
    public RunResult CancelWithPath(CompiledDefinition definition, WorkflowInstance instance, string? reason, StoreInstant now)
    {
        if (definition.OnCancel is null)
        {
            return RunResult.Success(Cancel(instance, reason, now));
        }

        var commit = NewCommit(instance, now);
        foreach (var wait in OpenWaits(commit.Instance))
        {
            if (wait.TaskId is { } task)
            {
                commit.ClosedTasks.Add(task);
            }

            // Its timer, or a call-out or child start not yet handled: nothing will wait for it again.
            if (wait.SignalId is { } own)
            {
                commit.SignalTransitions.Add(new SignalTransition(own, SignalStatus.Cancelled, null));
            }
        }

        Append(commit, now, HistoryEventTypes.CancelPathStarted, definition.OnCancel, new { reason });
        // An instance whose start failed (retried by its $start signal) has committed no run: this one is its first.
        var first = instance.Status == InstanceStatus.Running && instance.WaitKind is null;
        commit.Instance.ClearWait();
        return Run(definition, commit, definition.OnCancel, null, [], now, cancelling: reason ?? "cancelled", first: first);
    }

    /// <summary>
    /// The commit that cancels an instance at once: it ends, and its open signals and tasks are closed. An operator's
    /// termination says so in its history entry (<paramref name="terminated"/>), and is sent as instance.terminated.
    /// </summary>
    public static WaitPointCommit Cancel(WorkflowInstance instance, string? reason, StoreInstant now, bool terminated = false)
    {
        var commit = NewCommit(instance, now);
        var state = commit.Instance;
        commit.ClosedTasks.AddRange(OpenWaits(state).Select(w => w.TaskId).OfType<Guid>());
        state.Status = InstanceStatus.Cancelled;
        state.Error = reason;
        state.CompletedAt = now.NotBefore(state.UpdatedAt);
        state.ClearWait();
        state.ParkedSignals = 0;
        commit.CloseOpenWork = true;
        Append(commit, now, HistoryEventTypes.InstanceCancelled, null, terminated ? new { reason, terminated } : (object)new { reason });
        NotifyParent(commit, now);
        return commit;
    }

    private static WaitPointCommit NewCommit(WorkflowInstance instance, StoreInstant now)
    {
        var state = instance.Clone();
        state.UpdatedAt = now.NotBefore(instance.UpdatedAt);
        return new WaitPointCommit { Instance = state, ExpectedVersion = instance.Version };
    }

    private static void CloseUnmatched(WaitPointCommit commit, SignalMessage signal, StoreInstant now, long? leaseToken)
    {
        if (signal.IsSystem)
        {
            commit.SignalTransitions.Add(new SignalTransition(signal.Id, SignalStatus.Cancelled, leaseToken));
            return;
        }

        commit.SignalTransitions.Add(new SignalTransition(signal.Id, SignalStatus.Unmatched, leaseToken,
            $"instance ended {commit.Instance.Status} without waiting for '{signal.Name}'"));
        Append(commit, now, HistoryEventTypes.SignalUnmatched, null, new { signal = signal.Name, signalId = signal.Id });
    }

    private enum ResumeKind { Signal, Timeout, Timer, Task, CallOut, Child }

    /// <summary>The instance's own wait, or the waits of the branches of the parallel step it is in.</summary>
    private static IEnumerable<WaitPoint> OpenWaits(WorkflowInstance state) =>
        WaitPoint.Of(state) is { } own ? [own] : ParallelBranch.Parse(state.BranchesJson).Select(WaitPoint.Of).OfType<WaitPoint>();

    /// <summary>The wait that <paramref name="match"/> accepts, with the branch it belongs to (null: the instance's own).</summary>
    private static (WaitPoint Wait, BranchResume? Branch)? FindWait(WorkflowInstance state, Func<WaitPoint, bool> match)
    {
        if (WaitPoint.Of(state) is { } own)
        {
            return match(own) ? (own, null) : null;
        }

        if (state.WaitKind != WaitKind.Parallel)
        {
            return null;
        }

        var branches = ParallelBranch.Parse(state.BranchesJson);
        for (var i = 0; i < branches.Count; i++)
        {
            if (WaitPoint.Of(branches[i]) is { } open && open with { Item = branches[i].Index } is var wait && match(wait))
            {
                return (wait, new BranchResume(state.WaitStepId!, branches, i));
            }
        }

        return null;
    }

    private static (ResumeKind How, string? Next)? MatchWait(CompiledDefinition definition, WaitPoint wait, SignalMessage signal)
    {
        // Every step that waits continues after its wait.
        if (!definition.Steps.TryGetValue(wait.StepId, out var found) || found is not IContinuingStep step)
        {
            return null;
        }

        // A step at the end of a parallel branch has no next: the branch joins when it resumes.
        return wait.Kind switch
        {
            WaitKind.Signal when signal.Name == wait.Signal || (wait.Item is { } item && signal.Name == ForEachItems.SignalName(wait.Signal!, item))
                => (ResumeKind.Signal, step.Next),
            WaitKind.Signal when signal.Name == SignalMessage.TimeoutSignal && signal.Id == wait.TimerId
                && step is WaitForSignalStep { Timeout: { } timeout } => (ResumeKind.Timeout, timeout.Next),
            WaitKind.Timer when signal.Id == wait.TimerId => (ResumeKind.Timer, step.Next),
            WaitKind.Task when signal.Name == SignalMessage.TaskSignal && signal.TaskId == wait.TaskId => (ResumeKind.Task, step.Next),
            WaitKind.CallOut when signal.Name == SignalMessage.CallOutSignal && signal.Id == wait.CallOutId => (ResumeKind.CallOut, step.Next),
            WaitKind.SubWorkflow when signal.Name == SignalMessage.ChildEndedSignal && signal.ParentWaitId == wait.ChildStartId => (ResumeKind.Child, step.Next),
            _ => null,
        };
    }

    /// <summary>A branch of the parallel step (or an item of the forEach step) <see cref="ParallelStepId"/> that a run continues.</summary>
    private sealed record BranchResume(string ParallelStepId, List<ParallelBranch> Branches, int Index);

    /// <summary>Continues after a wait ended: the instance's own thread, or the branch whose wait it was.</summary>
    private RunResult Continue(CompiledDefinition definition, WaitPointCommit commit, BranchResume? branch, string? next,
        (string? Payload, string? Output)? received, IReadOnlyList<SignalMessage> parked, StoreInstant now)
    {
        if (branch is null)
        {
            commit.Instance.ClearWait();
        }
        else
        {
            branch.Branches[branch.Index].ClearWait();
        }

        commit.Instance.Status = InstanceStatus.Running;
        return Run(definition, commit, next, received, parked, now, branch: branch);
    }

    /// <summary>A failed run: nothing of it is stored.</summary>
    [SuppressMessage("Design", "CA1064:Exceptions should be public", Justification = "Control flow inside one run: Run catches it and returns a failed RunResult; it never leaves the executor.")]
    private sealed class RunFailedException(string? stepId, string message) : Exception(message)
    {
        public string? StepId { get; } = stepId;
    }

    private RunResult Run(CompiledDefinition definition, WaitPointCommit commit, string? startAt,
        (string? Payload, string? Output)? received, IReadOnlyList<SignalMessage> parked, StoreInstant now,
        string? cancelling = null, BranchResume? branch = null, bool first = false)
    {
        var state = commit.Instance;
        state.Status = InstanceStatus.Running;
        ExpressionScope scope;
        try
        {
            scope = expressions.OpenScope(state.VariablesJson, state.InputJson, received?.Payload, () => InstanceJson(state));
            if (received is { Output: { } output })
            {
                scope.AssignJson(output, received.Value.Payload);
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return RunResult.Failure(startAt, $"could not load the instance variables: {e.Message}");
        }

        var run = new RunState(definition, commit, scope, parked, now, cancelling)
        {
            BudgetEnds = time.GetTimestamp() + _runBudget,
        };
        scope.LimitTo(_options.MaxRunTime);
        try
        {
            if (branch is null)
            {
                RunFrom(run, startAt!);
            }
            else if (definition.Step(branch.ParallelStepId) is ForEachStep forEach)
            {
                if (ContinueItem(run, forEach, branch.Branches, branch.Index, startAt, received?.Payload) != ForkEnd.Ended
                    && AdvanceForEach(run, forEach, branch.Branches) == ForkEnd.Done)
                {
                    RunFrom(run, forEach.Next);
                }
            }
            else
            {
                var parallel = definition.Step(branch.ParallelStepId) as ParallelStep
                    ?? throw new InvalidOperationException($"'{branch.ParallelStepId}' of {definition.Name} v{definition.Version} is not a parallel step");
                if (ContinueBranch(run, parallel, branch.Branches, branch.Index, startAt) && Joined(run, parallel, branch.Branches))
                {
                    RunFrom(run, parallel.Next);
                }
            }
        }
        catch (RunFailedException e)
        {
            return RunResult.Failure(e.StepId, e.Message);
        }
        catch (RunBudgetExceededException)
        {
            // Out of budget in an expression evaluated outside a step (a parallel branch's join, say).
            var failed = OverBudget(startAt);
            return RunResult.Failure(failed.StepId, failed.Message);
        }
        catch (ScopeLoadException e)
        {
            // The scope opens when the run first needs JavaScript; what it could not read fails the run as it did at its start.
            return RunResult.Failure(startAt, $"could not load the instance variables: {e.Message}");
        }

        return Finish(definition, commit, scope, first, _options.MaxRunTime);
    }

    /// <summary>
    /// Runs the instance's own thread from <paramref name="stepId"/> until it waits or ends. A parallel step starts
    /// its branches one after the other, each until its first wait; when every branch has joined, the thread continues
    /// after the parallel step, otherwise the instance waits in it.
    /// </summary>
    private void RunFrom(RunState run, string stepId)
    {
        while (true)
        {
            switch (RunThread(run, stepId))
            {
                case { End: ThreadEnd.Waits, Wait: { } wait }:
                    var state = run.State;
                    state.Status = InstanceStatus.Waiting;
                    wait.StoreIn(state);
                    state.BranchesJson = null;
                    state.Error = null;
                    return;
                case { End: ThreadEnd.Ended }:
                    return;
                case { End: ThreadEnd.Forks, Parallel: { } parallel }:
                    var branches = parallel.ParallelBranches.Select(b => new ParallelBranch { Name = b.Name }).ToList();
                    Append(run.Commit, run.Now, HistoryEventTypes.ParallelStarted, parallel.Id, new { branches = branches.Select(b => b.Name) });
                    for (var i = 0; i < branches.Count; i++)
                    {
                        if (!ContinueBranch(run, parallel, branches, i, parallel.ParallelBranches[i].Entry))
                        {
                            return;
                        }
                    }

                    if (!Joined(run, parallel, branches))
                    {
                        return;
                    }

                    stepId = parallel.Next;
                    continue;
                case { End: ThreadEnd.Forks, ForEach: { } forEach }:
                    if (StartForEach(run, forEach) != ForkEnd.Done)
                    {
                        return;
                    }

                    stepId = forEach.Next;
                    continue;
                default:
                    throw new InvalidOperationException($"the definition's own steps cannot join (at '{stepId}')");
            }
        }
    }

    /// <summary>Runs branch <paramref name="index"/> from <paramref name="stepId"/> (null: it joins at once); false when the instance ended.</summary>
    private bool ContinueBranch(RunState run, ParallelStep parallel, List<ParallelBranch> branches, int index, string? stepId)
    {
        var branch = branches[index];
        switch (RunThread(run, stepId))
        {
            case { End: ThreadEnd.Waits, Wait: { } wait }:
                wait.StoreIn(branch);
                return true;
            case { End: ThreadEnd.Joined }:
                branch.ClearWait();
                branch.Joined = true;
                Append(run.Commit, run.Now, HistoryEventTypes.BranchJoined, parallel.Id, new { branch = branch.Name });
                return true;
            case { End: ThreadEnd.Ended }:
                // A branch ended the instance (fail): the other branches' open tasks close with it (their timers and
                // pending signals are closed by CloseOpenWork).
                for (var i = 0; i < branches.Count; i++)
                {
                    if (i != index && branches[i].WaitTaskId is { } task)
                    {
                        run.Commit.ClosedTasks.Add(task);
                    }
                }

                return false;
            default:
                throw new InvalidOperationException($"parallel steps do not nest (branch '{branch.Name}' of '{parallel.Id}')");
        }
    }

    /// <summary>True when every branch has joined (the run goes on after the parallel step); else the instance waits in it.</summary>
    private static bool Joined(RunState run, ParallelStep parallel, List<ParallelBranch> branches)
    {
        var state = run.State;
        if (branches.TrueForAll(b => b.Joined))
        {
            state.ClearWait();
            Append(run.Commit, run.Now, HistoryEventTypes.ParallelJoined, parallel.Id, null);
            return true;
        }

        state.Status = InstanceStatus.Waiting;
        state.ClearWait();
        state.WaitKind = WaitKind.Parallel;
        state.WaitStepId = parallel.Id;
        state.BranchesJson = ParallelBranch.Serialize(branches);
        state.Error = null;
        return false;
    }

    /// <summary>
    /// Runs one thread from <paramref name="startAt"/> until it reaches a wait point (which it describes, leaving the
    /// instance's state to the caller), ends the instance, runs off the end of its parallel branch (a null step: it
    /// joins) or reaches a parallel step.
    /// </summary>
    private ThreadResult RunThread(RunState run, string? startAt)
    {
        var stepId = startAt;
        try
        {
            while (true)
            {
                if (stepId is null)
                {
                    return new ThreadResult(ThreadEnd.Joined);
                }

                if (++run.Executed > _options.MaxStepsPerRun)
                {
                    throw new RunFailedException(stepId,
                        $"the run executed {_options.MaxStepsPerRun} steps without reaching a wait point (Engine:MaxStepsPerRun)");
                }

                if (time.GetTimestamp() > run.BudgetEnds)
                {
                    throw OverBudget(stepId);
                }

                var step = run.Definition.Step(stepId);
                try
                {
                    var result = step.Run(run);
                    if (result.End != ThreadEnd.Continues)
                    {
                        return result;
                    }

                    stepId = result.Next;
                }
                catch (ExpressionFailedException e) when (step is IErrorHandlingStep { OnError: { } onError })
                {
                    // The step's error path: record the failure and continue there instead of retrying the run.
                    run.Append(HistoryEventTypes.StepFailed, step.Id, new { error = e.Message, next = onError.Next });
                    if (onError.Output is not null)
                    {
                        run.Scope.AssignJson(onError.Output, JsonSerializer.Serialize(new { step = step.Id, message = e.Message }, EngineJson.Options));
                    }

                    stepId = onError.Next;
                }
            }
        }
        catch (ExpressionFailedException e)
        {
            throw new RunFailedException(stepId, $"step '{stepId}': {e.Message}");
        }
        catch (RunBudgetExceededException)
        {
            throw OverBudget(stepId);
        }
    }

    private RunFailedException OverBudget(string? stepId) => new(stepId, string.Create(CultureInfo.InvariantCulture,
        $"the run took more than {_options.MaxRunTime.TotalMilliseconds:0} ms without reaching a wait point (Engine:MaxRunTime)"));

    /// <summary>Queues a system signal for the instance itself (a timer, a call-out, a child start); returns its id.</summary>
    internal static Guid AddOwnSignal(WaitPointCommit commit, string name, long dueAtMs, StoreInstant now, string? payloadJson = null)
    {
        var signal = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = commit.Instance.Id,
            Name = name,
            PayloadJson = payloadJson,
            Status = SignalStatus.Pending,
            DueAtMs = dueAtMs,
            CreatedAt = now.UtcDateTime,
        };
        commit.NewSignals.Add(signal);
        return signal.Id;
    }

    internal static void End(WaitPointCommit commit, IReadOnlyList<SignalMessage> parked, HashSet<Guid> consumed,
        InstanceStatus status, string? error, StoreInstant now)
    {
        var state = commit.Instance;
        state.Status = status;
        state.Error = error;
        state.CompletedAt = now.NotBefore(state.UpdatedAt);
        state.ClearWait();
        foreach (var signal in parked)
        {
            if (!consumed.Contains(signal.Id))
            {
                CloseUnmatched(commit, signal, now, null);
            }
        }

        state.ParkedSignals = 0;
        commit.CloseOpenWork = true;
        NotifyParent(commit, now);
    }

    /// <summary>A child instance that ends tells its parent, in the same commit.</summary>
    private static void NotifyParent(WaitPointCommit commit, StoreInstant now)
    {
        var state = commit.Instance;
        if (state.ParentInstanceId is not { } parent)
        {
            return;
        }

        using var output = state.OutputJson is null ? null : JsonDocument.Parse(state.OutputJson);
        commit.NewSignals.Add(new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = parent,
            Name = SignalMessage.ChildEndedSignal,
            SubjectId = state.ParentWaitId,
            PayloadJson = JsonSerializer.Serialize(
                new { instanceId = state.Id, status = state.Status.ToString(), output = output?.RootElement, error = state.Error },
                EngineJson.Options),
            Status = SignalStatus.Pending,
            DueAtMs = now.UnixMs,
            CreatedAt = now.UtcDateTime,
        });
    }

    /// <summary>Records on the parent that its child started; the parent keeps waiting for the child's end.</summary>
    public static WaitPointCommit ChildStarted(WorkflowInstance parent, SignalMessage trigger, Guid childId, StoreInstant now)
    {
        var commit = NewCommit(parent, now);
        commit.SignalTransitions.Add(new SignalTransition(trigger.Id, SignalStatus.Handled, trigger.LeaseToken));
        Append(commit, now, HistoryEventTypes.SubWorkflowStarted, StepAwaiting(parent, trigger.Id, WaitKind.SubWorkflow) ?? parent.WaitStepId, new { childId });
        return commit;
    }

    /// <param name="first">Whether this is the instance's first run (its start, or the retry of a start that failed).</param>
    private static RunResult Finish(CompiledDefinition definition, WaitPointCommit commit, ExpressionScope scope, bool first, TimeSpan maxRunTime)
    {
        var before = commit.Instance.VariablesJson;
        commit.Instance.VariablesJson = scope.SerializeVariables();
        // Only a definition that declares search attributes evaluates them (after the variables are taken, so that an
        // expression's side effect stores nothing): the others' commits carry none (null) and write the row as before.
        // An instance's first run evaluates them all; a later one only those whose value may have changed: what reads
        // the variables when the run changed them, and what reads anything but input and variables. The input never
        // changes, and a migration evaluates what its new version adds (InstanceMigrator).
        if (definition.SearchAttributes.Count > 0)
        {
            // On an engine of their own (what a step did to the input or a built-in in the run's engine is not seen), and
            // with a budget of their own (Engine:MaxRunTime): a run that used up most of its own must not leave a value of
            // the input empty for good.
            var variablesChanged = !string.Equals(before, commit.Instance.VariablesJson, StringComparison.Ordinal);
            commit.Instance.SearchAttributes = Search.SearchAttributeEvaluation.Evaluate(definition.SearchAttributes,
                scope.ForSettledValues(commit.Instance.VariablesJson, maxRunTime), reads =>
                first || (reads & ExpressionReads.Anything) != 0 || (variablesChanged && (reads & ExpressionReads.Variables) != 0));
        }

        return RunResult.Success(commit);
    }

    internal static void Append(WaitPointCommit commit, StoreInstant now, string type, string? stepId, object? data)
    {
        var state = commit.Instance;
        commit.History.Add(new HistoryEvent
        {
            InstanceId = state.Id,
            Sequence = state.HistoryLength++,
            At = now.NotBefore(state.UpdatedAt),
            Type = type,
            StepId = stepId,
            DataJson = data is null ? null : JsonSerializer.Serialize(data, EngineJson.Options),
        });
    }

    private static string InstanceJson(WorkflowInstance state) =>
        JsonSerializer.Serialize(new
        {
            id = state.Id,
            definition = state.DefinitionName,
            version = state.DefinitionVersion,
            businessKey = state.BusinessKey,
        }, EngineJson.Options);
}
