using System.Diagnostics;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The engine's spans (System.Diagnostics.ActivitySource "WorkflowService.Engine"): the claim of a batch of signals, the
/// run that handles one, its commit, and each post of an event to its receiver. A run continues the trace its signal was sent in (the caller's request, stored
/// with the signal as a W3C traceparent), across the durable gap and across nodes. Without a listener (no telemetry
/// configured) no span is created and nothing is allocated.
/// </summary>
public static class EngineTelemetry
{
    public const string SourceName = "WorkflowService.Engine";

    /// <summary>The name of a wait point's commit span (<see cref="StartCommit"/>).</summary>
    public const string CommitSpanName = "workflow.commit";

    /// <summary>The name of a wake-up message's span (<see cref="StartWakeUp"/>).</summary>
    public const string WakeUpSpanName = "workflow.wakeup";

    /// <summary>
    /// Whether a store command issued now belongs in a trace: inside a recorded operation (a request, a run, a commit),
    /// and not a wake-up message's own NOTIFY, which its span already times.
    /// </summary>
    public static bool TracesStoreCommands() =>
        Activity.Current is { Recorded: true } current && !(current.OperationName == WakeUpSpanName && current.Source == Source);

    public static readonly ActivitySource Source = new(SourceName, typeof(EngineTelemetry).Assembly.GetName().Version?.ToString(3));

    /// <summary>
    /// The ambient W3C trace context to store with work that continues later, or null when nothing is traced: only a
    /// sampled one (a trace someone records), so that no signal carries an "unsampled" decision that would keep its run
    /// out of the traces of a node that does record, and a node without telemetry stores nothing.
    /// </summary>
    public static string? CurrentTraceParent() =>
        Activity.Current is { IdFormat: ActivityIdFormat.W3C, Recorded: true } current && current.Id is { Length: <= SignalMessage.TraceParentMaxLength } id
            ? id
            : null;

    /// <summary>
    /// Starts the span of a run that applies <paramref name="signal"/> where it arrived: a child of the request's span
    /// (the current activity), tagged <c>workflow.signal.on_arrival</c>; null when no one listens.
    /// </summary>
    public static Activity? StartRunOnArrival(SignalMessage signal, string node)
    {
        var activity = Source.HasListeners() ? Source.StartActivity("workflow.run", ActivityKind.Internal) : null;
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.instance.id", signal.InstanceId);
            activity.SetTag("workflow.signal.id", signal.Id);
            activity.SetTag("workflow.signal.name", signal.Name);
            activity.SetTag("workflow.signal.on_arrival", true);
        }

        return activity;
    }

    /// <summary>
    /// Starts the span of a run that handles <paramref name="signal"/> on <paramref name="node"/>; null when no one listens.
    /// A signal someone sent (a request, or another instance's run) makes it a child of that trace. A timer the instance
    /// set itself starts a trace of its own, linked to the run that set it: an instance that loops on a timer for months
    /// would otherwise grow one trace without end. Called where no activity is current (a worker's loop), so a signal
    /// without a context makes a root span.
    /// </summary>
    public static Activity? StartRun(SignalMessage signal, string node)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        var stored = ActivityContext.TryParse(signal.TraceParent, null, isRemote: true, out var context);
        var ownTimer = signal.Name is SignalMessage.TimerSignal or SignalMessage.TimeoutSignal;
        var activity = stored && ownTimer
            ? Source.StartActivity(ActivityKind.Consumer, default, links: [new ActivityLink(context)], name: "workflow.run")
            : Source.StartActivity(ActivityKind.Consumer, stored ? context : default, name: "workflow.run");
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

    /// <summary>
    /// Records on the current run's span (started by <see cref="StartRun"/>) what it committed: the definition and version it
    /// ran, the steps it executed, and the status it left the instance in. Nothing without a recorded span.
    /// </summary>
    public static void Ran(WaitPointCommit commit)
    {
        if (Activity.Current is not { IsAllDataRequested: true, OperationName: "workflow.run" } run || run.Source != Source)
        {
            return;
        }

        var steps = 0;
        foreach (var entry in commit.History)
        {
            if (entry.Type is HistoryEventTypes.StepCompleted)
            {
                steps++;
            }
        }

        run.SetTag("workflow.definition.name", commit.Instance.DefinitionName);
        run.SetTag("workflow.definition.version", commit.Instance.DefinitionVersion);
        run.SetTag("workflow.run.steps", steps);
        run.SetTag("workflow.instance.status", commit.Instance.Status.ToString());
    }

    /// <summary>
    /// Starts the span of one claim by <paramref name="node"/>; null when no one listens. A root span: the dispatcher's loop,
    /// which calls it, runs outside any activity. <paramref name="trigger"/> says what started it (one of
    /// <see cref="ClaimTriggers"/>).
    /// </summary>
    public static Activity? StartClaim(string node, int requested, string trigger)
    {
        var activity = Source.StartActivity("workflow.claim", ActivityKind.Internal, parentContext: default);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.claim.requested", requested);
            activity.SetTag("workflow.claim.trigger", trigger);
        }

        return activity;
    }

    /// <summary>
    /// Records on a claim's span the number of signals it took; a claim that found nothing (an idle poll, every second on
    /// an idle node) is not recorded, so that an idle node sends no claim spans. The caller ends the span.
    /// </summary>
    public static void Claimed(Activity? activity, int claimed)
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
    }

    /// <summary>
    /// Starts the span of one wait-point commit (a child of the run, or of the request that started an instance), with
    /// what it writes; null when no one listens. A commit that fails ends the span with the exception's status.
    /// </summary>
    public static Activity? StartCommit(WaitPointCommit commit)
    {
        var activity = Source.StartActivity(CommitSpanName, ActivityKind.Internal);
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

    /// <summary>
    /// Starts the span of one wake-up message <paramref name="node"/> sends to the other nodes over <paramref name="bus"/>;
    /// null when no one listens. A root: the sender's loop coalesces the hints of many commits into one message, and the
    /// message carries no trace context (a receiving node's claim says <c>trigger=wake-up</c>). It says whether the message
    /// announces a due signal and how many changed instances it names; a failed send ends it with an error. The send's own
    /// statement (NOTIFY) is not traced apart: this span is its time.
    /// </summary>
    public static Activity? StartWakeUp(string node, string bus, bool due, int instances)
    {
        var activity = Source.StartActivity(WakeUpSpanName, ActivityKind.Internal, parentContext: default);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.wakeup.transport", bus);
            activity.SetTag("workflow.wakeup.due", due);
            activity.SetTag("workflow.wakeup.instances", instances);
        }

        return activity;
    }

    /// <summary>The name of one delivery attempt's span (<see cref="StartDelivery"/>).</summary>
    public const string DeliverySpanName = "workflow.event.delivery";

    /// <summary>
    /// Starts the span of one post of <paramref name="delivery"/> to its subscription's receiver by <paramref name="node"/>;
    /// null when no one listens. A child of the trace the commit that wrote the event ran in (its <c>traceparent</c>), so
    /// a request's trace shows the events it caused reaching their receivers; a root where the commit was not traced.
    /// Ids, the type and the attempt only (and the request's number of events, when it carries more than one): never the
    /// body, the endpoint or the secret.
    /// </summary>
    public static Activity? StartDelivery(Events.EventDelivery delivery, string node, int batchSize = 1)
    {
        ArgumentNullException.ThrowIfNull(delivery);
        if (!Source.HasListeners())
        {
            return null;
        }

        var parent = ActivityContext.TryParse(Events.CloudEventBody.TraceParentOf(delivery.Body), null, isRemote: true, out var context)
            ? context
            : default;
        var activity = Source.StartActivity(DeliverySpanName, ActivityKind.Producer, parent);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("workflow.node", node);
            activity.SetTag("workflow.instance.id", delivery.InstanceId);
            activity.SetTag("workflow.subscription.id", delivery.SubscriptionId);
            activity.SetTag("workflow.event.type", delivery.Type);
            activity.SetTag("workflow.event.delivery.id", delivery.Id);
            activity.SetTag("workflow.event.delivery.attempt", delivery.Attempts);
            if (batchSize > 1)
            {
                activity.SetTag("workflow.event.batch.size", batchSize);
            }
        }

        return activity;
    }

    /// <summary>Records on a delivery's span the receiver's status (none when it did not answer) and how the attempt ended.</summary>
    public static void Delivered(Activity? activity, int? status, string outcome, string? error)
    {
        if (activity is not { IsAllDataRequested: true })
        {
            return;
        }

        if (status is { } code)
        {
            activity.SetTag("http.response.status_code", code);
        }

        activity.SetTag("workflow.event.delivery.outcome", outcome);
        if (outcome != DeliveryOutcomes.Success)
        {
            activity.SetStatus(ActivityStatusCode.Error, error);
        }
    }

    /// <summary>Marks <paramref name="activity"/> as failed with <paramref name="error"/>.</summary>
    public static void Failed(Activity? activity, string? error)
    {
        activity?.SetStatus(ActivityStatusCode.Error, error);
    }
}

/// <summary>What started a claim (the span's <c>workflow.claim.trigger</c>).</summary>
public static class ClaimTriggers
{
    /// <summary>The dispatcher's first claim.</summary>
    public const string Start = "start";
    /// <summary>A wake-up: a commit on this node, or another node's message.</summary>
    public const string WakeUp = "wake-up";
    /// <summary>The sleep ended at a time: the poll interval, or a due time the dispatcher knew of.</summary>
    public const string Time = "time";
    /// <summary>The claim before took a full batch: more work is likely waiting.</summary>
    public const string Backlog = "backlog";
    /// <summary>The claim before failed (the store); this one follows the error backoff.</summary>
    public const string Retry = "retry";
}
