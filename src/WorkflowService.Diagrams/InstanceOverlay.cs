using System.Text.RegularExpressions;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Diagrams;

/// <summary>How far an instance got with a step.</summary>
public enum StepState
{
    NotReached,
    Completed,
    /// <summary>The instance waits at this step (or, faulted, will resume from it on replay).</summary>
    Current,
    Failed,
}

/// <summary>What an instance diagram marks on the definition's diagram.</summary>
public sealed partial class InstanceOverlay
{
    /// <summary>History events that mean their step ran to its end.</summary>
    private static readonly HashSet<string> CompletingEvents = new(StringComparer.Ordinal)
    {
        HistoryEventTypes.StepCompleted,
        HistoryEventTypes.BranchTaken,
        HistoryEventTypes.SignalReceived,
        HistoryEventTypes.TimerFired,
        HistoryEventTypes.TimedOut,
        HistoryEventTypes.TaskCompleted,
        HistoryEventTypes.InstanceCompleted,
        HistoryEventTypes.ParallelJoined,
        HistoryEventTypes.CallOutCompleted,
        HistoryEventTypes.SubWorkflowEnded,
    };

    private InstanceOverlay(WorkflowInstance instance, IReadOnlyDictionary<string, StepState> states)
    {
        Instance = instance;
        States = states;
    }

    public WorkflowInstance Instance { get; }
    /// <summary>The state of every step of the definition.</summary>
    public IReadOnlyDictionary<string, StepState> States { get; }

    public StepState StateOf(string stepId) => States.TryGetValue(stepId, out var state) ? state : StepState.NotReached;

    /// <summary>
    /// Completed: every step named by a history event that ends a step. Current: the step the instance waits at and,
    /// in a parallel step, the step each branch waits at.
    /// Failed: for a Failed instance the fail step (its InstanceFailed event); for a Faulted one the step named in the
    /// error ("step 'id': ..."), else the one named by the last InstanceFaulted event, else the wait step. Failed wins over current, current over completed
    /// (a loop can pass a step and come back to wait there).
    /// </summary>
    public static InstanceOverlay From(CompiledDefinition definition, WorkflowInstance instance, IEnumerable<HistoryEvent> history)
    {
        var states = definition.Steps.Keys.ToDictionary(id => id, _ => StepState.NotReached, StringComparer.Ordinal);
        string? lastEnd = null;
        foreach (var entry in history.OrderBy(h => h.Sequence))
        {
            if (entry.StepId is not { } stepId || !states.ContainsKey(stepId))
            {
                continue;
            }

            if (CompletingEvents.Contains(entry.Type))
            {
                states[stepId] = StepState.Completed;
            }
            else if (entry.Type is HistoryEventTypes.InstanceFailed or HistoryEventTypes.InstanceFaulted)
            {
                lastEnd = stepId;
            }
        }

        if (instance.WaitStepId is { } waiting && states.ContainsKey(waiting)
            && instance.Status is InstanceStatus.Waiting or InstanceStatus.Faulted)
        {
            states[waiting] = StepState.Current;
            // In a parallel step: where each branch that has not joined waits.
            foreach (var branch in instance.ParallelBranches())
            {
                if (branch.StepId is { } step && states.ContainsKey(step))
                {
                    states[step] = StepState.Current;
                }
            }
        }

        if (instance.Status is InstanceStatus.Failed or InstanceStatus.Faulted)
        {
            // A fail step's reason is the definition's own text, so only a fault's error is read for a step id.
            var failed = instance.Status == InstanceStatus.Faulted
                ? StepNamedIn(instance.Error, states) ?? lastEnd ?? instance.WaitStepId
                : lastEnd ?? instance.WaitStepId;
            if (failed is not null && states.ContainsKey(failed))
            {
                states[failed] = StepState.Failed;
            }
        }

        return new InstanceOverlay(instance, states);
    }

    /// <summary>The step a run failure names: the executor reports a failed expression as "step 'id': reason".</summary>
    private static string? StepNamedIn(string? error, Dictionary<string, StepState> states) =>
        error is not null && FailedStepPattern().Match(error) is { Success: true } match && states.ContainsKey(match.Groups[1].Value)
            ? match.Groups[1].Value
            : null;

    [GeneratedRegex("^step '([A-Za-z0-9][A-Za-z0-9._-]{0,99})':")]
    private static partial Regex FailedStepPattern();
}
