using System.Globalization;
using System.Text.Json;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Execution;

/// <summary>
/// The forEach step: its items are the branches of the parallel machinery (<see cref="ParallelBranch"/> with an index),
/// each running the one body with its own wait, so signals, timers, tasks, call-outs and children find their item as
/// they find a parallel branch. Items start in order as places under maxConcurrency free up.
/// </summary>
public sealed partial class WorkflowExecutor
{
    /// <summary>How a forEach (or a run of its items) stopped: it waits for open items, it ended the instance, or it is done.</summary>
    private enum ForkEnd { Waits, Ended, Done }

    /// <summary>Evaluates the items, records them and starts the first ones.</summary>
    private ForkEnd StartForEach(RunState run, ForEachStep forEach)
    {
        var items = EvaluateItems(run, forEach);
        run.Append(HistoryEventTypes.ForEachStarted, forEach.Id,
            new { items = items.Count, mode = forEach.Sequential ? "sequential" : "parallel", maxConcurrency = forEach.OpenLimit(items.Count) });
        return AdvanceForEach(run, forEach, items);
    }

    private List<ParallelBranch> EvaluateItems(RunState run, ForEachStep forEach)
    {
        using var array = JsonDocument.Parse(run.Scope.EvaluateToJson(forEach.Items));
        if (array.RootElement.ValueKind != JsonValueKind.Array)
        {
            throw new RunFailedException(forEach.Id,
                $"step '{forEach.Id}': items must give an array; '{forEach.Items.Source}' gave {JsonKind(array.RootElement.ValueKind)}");
        }

        var count = array.RootElement.GetArrayLength();
        if (count > _options.MaxForEachItems)
        {
            throw new RunFailedException(forEach.Id, string.Create(CultureInfo.InvariantCulture,
                $"step '{forEach.Id}': items gave {count} items; a forEach takes at most {_options.MaxForEachItems} (Engine:MaxForEachItems)"));
        }

        return array.RootElement.EnumerateArray()
            .Select((item, index) => new ParallelBranch { Name = index.ToString(CultureInfo.InvariantCulture), Index = index, Item = item.Clone() })
            .ToList();
    }

    private static string JsonKind(JsonValueKind kind) => kind switch
    {
        JsonValueKind.Object => "an object",
        JsonValueKind.String => "a string",
        JsonValueKind.Number => "a number",
        JsonValueKind.True or JsonValueKind.False => "a boolean",
        _ => "null",
    };

    /// <summary>
    /// Starts pending items while places are free, and decides the step when its completion rule is met or can no
    /// longer be: it is done (the run goes on after it), it fails the instance, or the instance waits in it.
    /// </summary>
    private ForkEnd AdvanceForEach(RunState run, ForEachStep forEach, List<ParallelBranch> items)
    {
        var limit = forEach.OpenLimit(items.Count);
        var required = forEach.Completion.Required(items.Count);
        while (true)
        {
            var succeeded = items.Count(i => i.Joined && !i.Failed && !i.Cancelled);
            var failed = items.Count(i => i.Failed);
            var open = items.Count(i => i.IsOpen);
            var pending = items.Count(i => !i.Started);
            if (failed > forEach.ToleratedFailures)
            {
                return FailForEach(run, forEach, items, string.Create(CultureInfo.InvariantCulture,
                    $"forEach '{forEach.Id}': {failed} of {items.Count} items failed, {forEach.ToleratedFailures} tolerated"));
            }

            if (required is { } needed && succeeded + open + pending < needed)
            {
                return FailForEach(run, forEach, items, string.Create(CultureInfo.InvariantCulture,
                    $"forEach '{forEach.Id}': {succeeded} of {items.Count} items succeeded and no more can, {needed} needed"));
            }

            if (required is { } enough ? succeeded >= enough : open + pending == 0)
            {
                CloseItems(run, forEach, items);
                if (forEach.Output is { } output)
                {
                    run.Scope.AssignJson(output, JsonSerializer.Serialize(items.Select(i => i.Failed || i.Cancelled ? null : i.Result), EngineJson.Options));
                }

                run.State.ClearWait();
                run.Append(HistoryEventTypes.ForEachEnded, forEach.Id, new { succeeded, failed, cancelled = items.Count(i => i.Cancelled) });
                return ForkEnd.Done;
            }

            if (pending > 0 && open < limit)
            {
                var next = items.FindIndex(i => !i.Started);
                items[next].Started = true;
                run.Append(HistoryEventTypes.ItemStarted, forEach.Id, new { index = next });
                if (ContinueItem(run, forEach, items, next, forEach.Entry, null) == ForkEnd.Ended)
                {
                    return ForkEnd.Ended;
                }

                continue;
            }

            var state = run.State;
            state.Status = InstanceStatus.Waiting;
            state.ClearWait();
            state.WaitKind = WaitKind.Parallel;
            state.WaitStepId = forEach.Id;
            state.BranchesJson = ParallelBranch.Serialize(items);
            state.Error = null;
            return ForkEnd.Waits;
        }
    }

    /// <summary>
    /// Runs item <paramref name="index"/> from <paramref name="stepId"/> with <c>item</c> and <c>itemIndex</c> set, until
    /// it waits, ends (succeeds or fails) or ends the instance; <paramref name="resumedWith"/> is the payload that resumed
    /// it (null when it starts).
    /// </summary>
    private ForkEnd ContinueItem(RunState run, ForEachStep forEach, List<ParallelBranch> items, int index, string? stepId, string? resumedWith)
    {
        var item = items[index];
        run.Item = index;
        run.Scope.SetItem(item.Item?.GetRawText(), index);
        if (resumedWith is null)
        {
            // A fresh item sees no other item's signal.
            run.Scope.SetSignal(null);
        }

        try
        {
            var result = RunThread(run, stepId);
            switch (result)
            {
                case { End: ThreadEnd.Waits, Wait: { } wait }:
                    wait.StoreIn(item);
                    return ForkEnd.Waits;
                case { End: ThreadEnd.Joined }:
                    EndItem(run, forEach, item, resumedWith);
                    return ForkEnd.Done;
                case { End: ThreadEnd.ItemFailed }:
                    EndItem(run, forEach, item, error: result.Next ?? "failed");
                    return ForkEnd.Done;
                case { End: ThreadEnd.Ended }:
                    // The body ended the instance (complete): the other items' open work closes with it.
                    item.Joined = true;
                    CloseItems(run, forEach, items);
                    return ForkEnd.Ended;
                default:
                    throw new InvalidOperationException($"forEach and parallel steps do not nest (item {index} of '{forEach.Id}')");
            }
        }
        finally
        {
            run.Item = null;
            run.Scope.SetItem(null, null);
        }
    }

    /// <summary>
    /// Ends an item whose body ran to its end: its result is the step's <c>result</c> expression, else the payload
    /// that resumed it. In child mode the child's status decides: an item whose child did not complete fails.
    /// </summary>
    private static void EndItem(RunState run, ForEachStep forEach, ParallelBranch item, string? resumedWith = null, string? error = null)
    {
        item.ClearWait();
        item.Joined = true;
        if (error is null && forEach.Child is not null && resumedWith is not null)
        {
            using var child = JsonDocument.Parse(resumedWith);
            var root = child.RootElement;
            var status = root.TryGetProperty("status", out var s) ? s.GetString() : null;
            if (status != nameof(InstanceStatus.Completed))
            {
                error = root.TryGetProperty("error", out var e) && e.ValueKind == JsonValueKind.String
                    ? $"child {status}: {e.GetString()}"
                    : $"child {status}";
            }
            else if (forEach.Result is null)
            {
                item.Result = root.TryGetProperty("output", out var output) ? output.Clone() : null;
            }
        }
        else if (error is null && forEach.Result is null && resumedWith is not null)
        {
            using var payload = JsonDocument.Parse(resumedWith);
            item.Result = payload.RootElement.Clone();
        }

        if (error is null && forEach.Result is { } result)
        {
            using var value = JsonDocument.Parse(run.Scope.EvaluateToJson(result));
            item.Result = value.RootElement.Clone();
        }

        item.Failed = error is not null;
        item.Error = error;
        run.Append(HistoryEventTypes.ItemEnded, forEach.Id, error is null ? new { index = item.Index, outcome = "succeeded" } : new { index = item.Index, outcome = "failed", error });
    }

    /// <summary>The step failed: its open items close and the instance fails.</summary>
    private static ForkEnd FailForEach(RunState run, ForEachStep forEach, List<ParallelBranch> items, string reason)
    {
        CloseItems(run, forEach, items);
        run.Append(HistoryEventTypes.ForEachEnded, forEach.Id, new { failed = items.Count(i => i.Failed), error = reason });
        run.End(InstanceStatus.Failed, reason);
        run.Append(HistoryEventTypes.InstanceFailed, forEach.Id, new { reason });
        return ForkEnd.Ended;
    }

    /// <summary>Closes the items still open or pending: their tasks close, and their timers, call-outs and child starts are cancelled.</summary>
    private static void CloseItems(RunState run, ForEachStep forEach, List<ParallelBranch> items)
    {
        foreach (var item in items.Where(i => !i.Joined))
        {
            if (WaitPoint.Of(item) is { } wait)
            {
                if (wait.TaskId is { } task)
                {
                    run.Commit.ClosedTasks.Add(task);
                }

                if (wait.SignalId is { } own)
                {
                    run.Commit.SignalTransitions.Add(new SignalTransition(own, SignalStatus.Cancelled, null));
                }

                run.Append(HistoryEventTypes.ItemEnded, forEach.Id, new { index = item.Index, outcome = "cancelled" });
            }

            item.ClearWait();
            item.Joined = true;
            item.Cancelled = true;
        }
    }
}
