using System.Text.Json;
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

/// <summary>
/// An edge the instance took: its kind and the names of its ends as the diagram's data-from and data-to give them
/// (<see cref="To"/> null: whichever target the edge of that kind from <see cref="From"/> has), and for a decision
/// branch its index (null: any branch of the decision to <see cref="To"/>, for history written before the index was).
/// </summary>
public readonly record struct TakenEdge(DiagramEdgeKind Kind, string From, string? To = null, int? Branch = null);

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
        HistoryEventTypes.ForEachEnded,
        HistoryEventTypes.CallOutCompleted,
        HistoryEventTypes.SubWorkflowEnded,
        // With a step: the end of the cancel path (a complete or fail step there ends the instance cancelled).
        HistoryEventTypes.InstanceCancelled,
    };

    /// <summary>History events that mean an instance began to wait at their step (a cancel then leaves from there).</summary>
    private static readonly HashSet<string> WaitingEvents = new(StringComparer.Ordinal)
    {
        HistoryEventTypes.WaitStarted,
        HistoryEventTypes.TaskCreated,
        HistoryEventTypes.CallOutStarted,
    };

    /// <summary>History events after which a step goes on to its <c>next</c> (or, ending a parallel branch, to the join).</summary>
    private static readonly HashSet<string> NextEvents = new(StringComparer.Ordinal)
    {
        HistoryEventTypes.StepCompleted,
        HistoryEventTypes.SignalReceived,
        HistoryEventTypes.TimerFired,
        HistoryEventTypes.TaskCompleted,
        HistoryEventTypes.CallOutCompleted,
        HistoryEventTypes.SubWorkflowEnded,
    };

    private readonly HashSet<TakenEdge> _taken;

    private InstanceOverlay(WorkflowInstance instance, IReadOnlyDictionary<string, StepState> states, HashSet<TakenEdge> taken)
    {
        Instance = instance;
        States = states;
        _taken = taken;
    }

    /// <summary>The edges the instance took, as its history tells.</summary>
    public IReadOnlyCollection<TakenEdge> Taken => _taken;

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
        var ordered = history.OrderBy(h => h.Sequence).ToList();
        var taken = TakenEdges(definition, ordered);
        string? lastEnd = null;
        foreach (var entry in ordered)
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

        return new InstanceOverlay(instance, states, taken);
    }

    /// <summary>Whether the instance took the edge.</summary>
    internal bool Took(DiagramEdge edge)
    {
        var from = edge.Source.EndName;
        var to = edge.Target.EndName;
        return _taken.Contains(new TakenEdge(edge.Kind, from))
            || _taken.Contains(new TakenEdge(edge.Kind, from, to))
            || (edge.Branch is { } branch && _taken.Contains(new TakenEdge(edge.Kind, from, to, branch)));
    }

    /// <summary>
    /// The edges taken, from the events that end a step, each of which names where the step went on: its next (or
    /// the join, at the end of a parallel branch) after it ran or its wait ended; its timeout; the decision's branch or
    /// otherwise (BranchTaken's next and branch index); its error path (StepFailed). The start edge once the instance
    /// started, a parallel step's forks once it started and its join's edge once it joined, and for a cancel the cancel
    /// path's edge and the edges into it from every step the instance was waiting at.
    /// </summary>
    private static HashSet<TakenEdge> TakenEdges(CompiledDefinition definition, List<HistoryEvent> history)
    {
        var taken = new HashSet<TakenEdge>();
        var waiting = new HashSet<string>(StringComparer.Ordinal);
        foreach (var entry in history)
        {
            if (entry.Type == HistoryEventTypes.InstanceStarted)
            {
                taken.Add(new TakenEdge(DiagramEdgeKind.Start, ""));
                continue;
            }

            if (entry.StepId is not { } stepId || !definition.Steps.TryGetValue(stepId, out var step))
            {
                continue;
            }

            if (WaitingEvents.Contains(entry.Type))
            {
                waiting.Add(stepId);
                continue;
            }

            if (entry.Type == HistoryEventTypes.CancelPathStarted)
            {
                taken.Add(new TakenEdge(DiagramEdgeKind.Cancel, ""));
                taken.UnionWith(waiting.Select(w => new TakenEdge(DiagramEdgeKind.Interrupt, w)));
                waiting.Clear();
                continue;
            }

            if (NextEvents.Contains(entry.Type) || entry.Type is HistoryEventTypes.TimedOut or HistoryEventTypes.StepFailed)
            {
                waiting.Remove(stepId);
            }

            switch (entry.Type)
            {
                case var type when NextEvents.Contains(type) && step is IContinuingStep continuing and not ParallelStep and not ForEachStep:
                    if (continuing.Next is not null)
                    {
                        taken.Add(new TakenEdge(DiagramEdgeKind.Next, stepId));
                    }
                    else if (step.Within is not null)
                    {
                        taken.Add(new TakenEdge(DiagramEdgeKind.Join, stepId));
                    }

                    break;
                case HistoryEventTypes.TimedOut:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Timeout, stepId));
                    break;
                case HistoryEventTypes.StepFailed:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Error, stepId));
                    break;
                case HistoryEventTypes.BranchTaken when step is DecisionStep decision && Read(entry.DataJson) is { Next: { } next } data:
                    if (data.Branch is { } index)
                    {
                        taken.Add(new TakenEdge(DiagramEdgeKind.Branch, stepId, next, index));
                    }
                    else if (decision.Otherwise == next)
                    {
                        taken.Add(new TakenEdge(DiagramEdgeKind.Otherwise, stepId));
                    }
                    else
                    {
                        taken.Add(new TakenEdge(DiagramEdgeKind.Branch, stepId, next));
                    }

                    break;
                case HistoryEventTypes.ParallelStarted:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Fork, stepId));
                    break;
                case HistoryEventTypes.ParallelJoined:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Next, DiagramNode.JoinName(stepId)));
                    break;
                case HistoryEventTypes.ForEachStarted:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Fork, stepId));
                    break;
                // A forEach that failed says why in its error, and the instance fails there: it continues nowhere.
                case HistoryEventTypes.ForEachEnded when step is ForEachStep && entry.DataJson?.Contains("\"error\"", StringComparison.Ordinal) != true:
                    taken.Add(new TakenEdge(DiagramEdgeKind.Next, DiagramNode.JoinName(stepId)));
                    break;
            }
        }

        return taken;
    }

    private sealed record BranchTakenData(string? Next, int? Branch);

    private static BranchTakenData? Read(string? json)
    {
        if (json is null)
        {
            return null;
        }

        try
        {
            return JsonSerializer.Deserialize<BranchTakenData>(json, JsonSerializerOptions.Web);
        }
        catch (JsonException)
        {
            return null;
        }
    }

    /// <summary>The step a run failure names: the executor reports a failed expression as "step 'id': reason".</summary>
    private static string? StepNamedIn(string? error, Dictionary<string, StepState> states) =>
        error is not null && FailedStepPattern().Match(error) is { Success: true } match && states.ContainsKey(match.Groups[1].Value)
            ? match.Groups[1].Value
            : null;

    [GeneratedRegex("^step '([A-Za-z0-9][A-Za-z0-9._-]{0,99})':")]
    private static partial Regex FailedStepPattern();
}
