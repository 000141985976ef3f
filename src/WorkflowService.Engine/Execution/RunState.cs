using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Execution;

/// <summary>What one run carries from step to step, across the instance's own thread and its parallel branches.</summary>
internal sealed class RunState(CompiledDefinition definition, WaitPointCommit commit, ExpressionScope scope,
    IReadOnlyList<SignalMessage> parked, StoreInstant now, string? cancelling)
{
    public CompiledDefinition Definition { get; } = definition;
    public WaitPointCommit Commit { get; } = commit;
    public WorkflowInstance State => Commit.Instance;
    public ExpressionScope Scope { get; } = scope;
    public IReadOnlyList<SignalMessage> Parked { get; } = parked;
    public HashSet<Guid> ConsumedParked { get; } = [];
    /// <summary>The store's clock when the run began: every timestamp and due time of the run is read from it.</summary>
    public StoreInstant Now { get; } = now;
    /// <summary>The reason of the cooperative cancel whose path this run follows; null on any other run.</summary>
    public string? Cancelling { get; } = cancelling;
    public int Executed { get; set; }
    /// <summary>The <see cref="TimeProvider"/> timestamp past which the run fails (<c>Engine:MaxRunTime</c>).</summary>
    public long BudgetEnds { get; init; }
    /// <summary>The index of the forEach item whose body runs now; null outside a forEach body.</summary>
    public int? Item { get; set; }

    public void Append(string type, string? stepId, object? data) => WorkflowExecutor.Append(Commit, Now, type, stepId, data);

    /// <summary>Queues a system signal for the instance itself (a timer, a call-out, a child start); returns its id.</summary>
    public Guid AddOwnSignal(string name, long dueAtMs, string? payloadJson = null) =>
        WorkflowExecutor.AddOwnSignal(Commit, name, dueAtMs, Now, payloadJson);

    /// <summary>Ends the instance: what was parked and not consumed is closed as unmatched.</summary>
    public void End(InstanceStatus status, string? error) => WorkflowExecutor.End(Commit, Parked, ConsumedParked, status, error, Now);

    /// <summary>The end of the cancel path: whatever it computed, the instance ends cancelled.</summary>
    public ThreadResult EndCancelPath(string stepId)
    {
        End(InstanceStatus.Cancelled, Cancelling);
        Append(HistoryEventTypes.InstanceCancelled, stepId, new { reason = Cancelling });
        return ThreadResult.Ended;
    }

    /// <summary>
    /// Handles a parked signal of this name that arrived before its wait, if there is one not consumed yet; in a forEach
    /// body one sent to this item (<c>name#index</c>) comes first.
    /// </summary>
    public SignalMessage? TakeParked(string name) =>
        (Item is { } index ? TakeParkedNamed(ForEachItems.SignalName(name, index)) : null) ?? TakeParkedNamed(name);

    private SignalMessage? TakeParkedNamed(string name)
    {
        foreach (var signal in Parked)
        {
            if (signal.Name == name && !ConsumedParked.Contains(signal.Id))
            {
                ConsumedParked.Add(signal.Id);
                State.ParkedSignals = Math.Max(0, State.ParkedSignals - 1);
                Commit.SignalTransitions.Add(new SignalTransition(signal.Id, SignalStatus.Handled, null));
                return signal;
            }
        }

        return null;
    }
}

/// <summary>
/// A wait as signals are matched against it (the instance's own, or a parallel branch's), typed by what ends it: each
/// of the engine's own signals has its own field, though the stored state keeps them in one
/// (<see cref="IWaitState.WaitSignalId"/>).
/// </summary>
internal sealed record WaitPoint(WaitKind Kind, string StepId)
{
    /// <summary>The awaited signal's name (a signal wait).</summary>
    public string? Signal { get; init; }
    /// <summary>A delay's timer, or a signal wait's timeout.</summary>
    public Guid? TimerId { get; init; }
    /// <summary>The $http signal that carries a call-out's request.</summary>
    public Guid? CallOutId { get; init; }
    /// <summary>The $subflow signal that starts the child; the child's end names it.</summary>
    public Guid? ChildStartId { get; init; }
    /// <summary>The human task awaited.</summary>
    public Guid? TaskId { get; init; }
    /// <summary>The forEach item whose wait this is: a signal sent to it (<c>name#index</c>) ends it too.</summary>
    public int? Item { get; init; }

    /// <summary>The engine's own signal of this wait, whichever it is: how the wait is stored.</summary>
    public Guid? SignalId => TimerId ?? CallOutId ?? ChildStartId;

    /// <summary>The wait stored in <paramref name="state"/>, or null while it runs, has ended or joined (or is in a parallel step: its branches wait).</summary>
    public static WaitPoint? Of(IWaitState state) => state.WaitKind switch
    {
        null or WaitKind.Parallel => null,
        WaitKind.CallOut => new(WaitKind.CallOut, state.WaitStepId!) { CallOutId = state.WaitSignalId },
        WaitKind.SubWorkflow => new(WaitKind.SubWorkflow, state.WaitStepId!) { ChildStartId = state.WaitSignalId },
        var kind => new(kind.Value, state.WaitStepId!) { Signal = state.WaitSignal, TimerId = state.WaitSignalId, TaskId = state.WaitTaskId },
    };

    /// <summary>Stores this wait in <paramref name="state"/>.</summary>
    public void StoreIn(IWaitState state)
    {
        state.WaitKind = Kind;
        state.WaitStepId = StepId;
        state.WaitSignal = Signal;
        state.WaitSignalId = SignalId;
        state.WaitTaskId = TaskId;
    }
}

/// <summary>
/// How a step or a thread of a run (the instance's own, a parallel branch or a forEach item) stopped; ItemFailed: a
/// fail step ended the forEach item whose body it is in (its reason in <see cref="ThreadResult.Next"/>).
/// </summary>
internal enum ThreadEnd { Continues, Waits, Ended, Joined, Forks, ItemFailed }

internal readonly record struct ThreadResult(ThreadEnd End, string? Next = null, WaitPoint? Wait = null, ParallelStep? Parallel = null,
    ForEachStep? ForEach = null)
{
    public static readonly ThreadResult Ended = new(ThreadEnd.Ended);

    /// <summary>The step is done and the thread goes on at <paramref name="next"/> (null: the branch joins).</summary>
    public static ThreadResult ContinueAt(string? next) => new(ThreadEnd.Continues, next);

    public static ThreadResult Waits(WaitPoint wait) => new(ThreadEnd.Waits, Wait: wait);
}
