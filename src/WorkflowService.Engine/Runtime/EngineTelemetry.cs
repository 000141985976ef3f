using System.Diagnostics;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The engine's spans (System.Diagnostics.ActivitySource "WorkflowService.Engine"): the claim of a batch of signals, the
/// run that handles one, and its commit. A run continues the trace its signal was sent in (the caller's request, stored
/// with the signal as a W3C traceparent), across the durable gap and across nodes. Without a listener (no telemetry
/// configured) no span is created and nothing is allocated.
/// </summary>
public static class EngineTelemetry
{
    public const string SourceName = "WorkflowService.Engine";

    public static readonly ActivitySource Source = new(SourceName, typeof(EngineTelemetry).Assembly.GetName().Version?.ToString(3));

    /// <summary>The ambient W3C trace context to store with work that continues later, or null when nothing is traced.</summary>
    public static string? CurrentTraceParent() =>
        Activity.Current is { IdFormat: ActivityIdFormat.W3C } current && current.Id is { Length: <= SignalMessage.TraceParentMaxLength } id ? id : null;

    /// <summary>
    /// Starts the span of a run that handles <paramref name="signal"/> on <paramref name="node"/>, a child of the trace the
    /// signal was sent in (a root when it carries none); null when no one listens.
    /// </summary>
    public static Activity? StartRun(SignalMessage signal, string node)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        var parent = ActivityContext.TryParse(signal.TraceParent, null, isRemote: true, out var context) ? context : default;
        var activity = Source.StartActivity(ActivityKind.Consumer, parent, name: "workflow.run");
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.instance.id", signal.InstanceId);
            activity.SetTag("workflow.signal.id", signal.Id);
            activity.SetTag("workflow.signal.name", signal.Name);
            activity.SetTag("workflow.signal.attempt", signal.Attempts);
        }

        return activity;
    }

    /// <summary>Starts the span of one claim by <paramref name="node"/> (a root span); null when no one listens.</summary>
    public static Activity? StartClaim(string node, int requested)
    {
        var activity = Source.StartActivity("workflow.claim", ActivityKind.Internal, parentContext: default);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.claim.requested", requested);
        }

        return activity;
    }

    /// <summary>
    /// Ends a claim's span with the number of signals it took; a claim that found nothing (an idle poll, every second on an
    /// idle node) is not recorded, so that an idle node sends no spans.
    /// </summary>
    public static void EndClaim(Activity? activity, int claimed)
    {
        if (activity is null)
        {
            return;
        }

        if (claimed == 0)
        {
            activity.ActivityTraceFlags &= ~ActivityTraceFlags.Recorded;
            activity.IsAllDataRequested = false;
        }
        else
        {
            activity.SetTag("workflow.claim.batch_size", claimed);
        }

        activity.Dispose();
    }

    /// <summary>
    /// Starts the span of one wait-point commit (a child of the run, or of the request that started an instance), with
    /// what it writes; null when no one listens. A commit that fails ends the span with the exception's status.
    /// </summary>
    public static Activity? StartCommit(WaitPointCommit commit)
    {
        var activity = Source.StartActivity("workflow.commit", ActivityKind.Internal);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.instance.id", commit.Instance.Id);
            activity.SetTag("workflow.definition.name", commit.Instance.DefinitionName);
            activity.SetTag("workflow.definition.version", commit.Instance.DefinitionVersion);
            activity.SetTag("workflow.instance.status", commit.Instance.Status.ToString());
            activity.SetTag("workflow.commit.history_events", commit.History.Count);
            activity.SetTag("workflow.commit.new_signals", commit.NewSignals.Count);
            activity.SetTag("workflow.commit.new_tasks", commit.NewTasks.Count);
        }

        return activity;
    }

    /// <summary>Marks <paramref name="activity"/> as failed with <paramref name="error"/>.</summary>
    public static void Failed(Activity? activity, string? error)
    {
        activity?.SetStatus(ActivityStatusCode.Error, error);
    }
}
