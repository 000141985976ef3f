using System.Diagnostics.Metrics;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The engine's instruments (System.Diagnostics.Metrics, meter "WorkflowService.Engine"), named and united the
/// OpenTelemetry way (dotted lower-case names, plural for counts of things with a <c>{thing}</c> unit, durations in
/// seconds), and the totals GET /metrics reads. Every instrument is listed in docs/operations.md.
/// </summary>
public sealed class EngineMetrics : IDisposable
{
    public const string MeterName = "WorkflowService.Engine";

    private readonly Meter _meter;
    private readonly Counter<long> _started;
    private readonly Counter<long> _accepted;
    private readonly Counter<long> _signalsHandled;
    private readonly Counter<long> _onArrival;
    private readonly Counter<long> _conflicts;
    private readonly Counter<long> _retries;
    private readonly Counter<long> _deadLetters;
    private readonly Counter<long> _retentionDeleted;
    private long _retentionDeletedTotal;
    private readonly Histogram<double> _runSeconds;
    private readonly Histogram<double> _commitSeconds;
    private readonly Histogram<double> _ageAtClaimSeconds;
    private readonly Histogram<int> _claimBatch;
    private readonly Counter<long> _eventsWritten;
    private readonly Counter<long> _eventsDelivered;
    private readonly Counter<long> _deliveryAttempts;
    private readonly Counter<long> _eventsDeadLettered;
    private readonly Histogram<double> _deliverySeconds;
    private readonly Histogram<double> _eventLagSeconds;
    private long _eventsWrittenTotal;
    private long _eventsDeliveredTotal;
    private long _deliveryRetriesTotal;
    private long _eventsDeadLetteredTotal;
    private long _conflictTotal;
    private long _deadLetterTotal;
    private long _retryTotal;
    private long _handledTotal;
    private long _pollCycles;

    public EngineMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _started = _meter.CreateCounter<long>("workflow.instances.started", "{instance}", "instances started");
        _accepted = _meter.CreateCounter<long>("workflow.signals.accepted", "{signal}",
            "signals accepted from callers (POST /instances/{id}/signals, task completions), queued for a worker or applied on arrival");
        _signalsHandled = _meter.CreateCounter<long>("workflow.signals.handled", "{signal}", "signals whose run committed");
        _onArrival = _meter.CreateCounter<long>("workflow.signals.on_arrival", "{signal}",
            "signals the receiving node tried to apply at once (outcome: applied, or queued when the commit's check failed)");
        _conflicts = _meter.CreateCounter<long>("workflow.commit.conflicts", "{conflict}",
            "commits that lost the race on the instance's version and ran again (optimistic concurrency)");
        _retries = _meter.CreateCounter<long>("workflow.runs.retried", "{run}", "failed runs handed back to be retried with backoff");
        _deadLetters = _meter.CreateCounter<long>("workflow.signals.dead_lettered", "{signal}", "signals given up on, with the reason, for an operator");
        _retentionDeleted = _meter.CreateCounter<long>("workflow.retention.deleted", "{row}",
            "rows the retention job deleted, by table (instances, history, signals, tasks, deliveries)");
        _runSeconds = _meter.CreateHistogram("workflow.run.duration", "s",
            "a claimed signal's handling: the instance run to its next wait and its commit", tags: null,
            advice: LatencySeconds);
        _commitSeconds = _meter.CreateHistogram("workflow.commit.duration", "s",
            "one wait point's write (state, history, signals, tasks in one transaction), queueing for the writer included", tags: null,
            advice: LatencySeconds);
        _ageAtClaimSeconds = _meter.CreateHistogram("workflow.signal.age_at_claim", "s",
            "from a signal's due time (its creation, for one due at once) to its claim by a worker, by the store's clock: the queue's latency",
            tags: null, advice: LatencySeconds);
        _claimBatch = _meter.CreateHistogram("workflow.claim.batch_size", "{signal}", "signals one claim took (claims that took none are not recorded)",
            tags: null, advice: new InstrumentAdvice<int> { HistogramBucketBoundaries = [1, 2, 4, 8, 16, 32, 64, 128, 256] });
        _eventsWritten = _meter.CreateCounter<long>("workflow.events.written", "{event}",
            "event deliveries written to the outbox by committed writes (one per event and subscription that takes it)");
        _eventsDelivered = _meter.CreateCounter<long>("workflow.events.delivered", "{event}", "event deliveries a receiver answered with a 2xx");
        _deliveryAttempts = _meter.CreateCounter<long>("workflow.events.delivery_attempts", "{attempt}",
            "posts of an event to its receiver (outcome: success, retry, gone, dead_lettered)");
        _eventsDeadLettered = _meter.CreateCounter<long>("workflow.events.dead_lettered", "{event}",
            "event deliveries given up on after their retry period or attempts, kept for a replay");
        _deliverySeconds = _meter.CreateHistogram("workflow.event.delivery.duration", "s",
            "one post to a receiver (an event, or a batch of them), until its answer or the attempt's timeout", tags: null, advice: LatencySeconds);
        _eventLagSeconds = _meter.CreateHistogram("workflow.event.lag", "s",
            "from the commit that wrote an event to its receiver's 2xx, by the store's clock, retries included", tags: null, advice: LatencySeconds);
    }

    /// <summary>
    /// How long due signals waited for a worker: from the due time (a signal due at once: when it was written) to the claim,
    /// by the store's clock. Across nodes this is the wake-up's latency; where no hint arrived, the poll's.
    /// </summary>
    public LatencyHistogram SignalAgeAtClaim { get; } = new();

    /// <summary>From the commit that wrote an event to its receiver's 2xx, by the store's clock, on this node's deliveries.</summary>
    public LatencyHistogram EventLag { get; } = new();

    public long EventsWritten => Interlocked.Read(ref _eventsWrittenTotal);
    public long EventsDelivered => Interlocked.Read(ref _eventsDeliveredTotal);
    /// <summary>Failed posts given another attempt later.</summary>
    public long EventDeliveryRetries => Interlocked.Read(ref _deliveryRetriesTotal);
    public long EventsDeadLettered => Interlocked.Read(ref _eventsDeadLetteredTotal);

    public long Conflicts => Interlocked.Read(ref _conflictTotal);
    public long DeadLetters => Interlocked.Read(ref _deadLetterTotal);
    public long Retries => Interlocked.Read(ref _retryTotal);
    public long SignalsHandled => Interlocked.Read(ref _handledTotal);
    /// <summary>Completed dispatcher look-ups that found nothing due (lets tests wait for "the poll ran" without sleeping).</summary>
    public long IdlePolls => Interlocked.Read(ref _pollCycles);

    public void InstanceStarted() => _started.Add(1);

    /// <summary>Rows deleted by retention since start, every table together.</summary>
    public long RetentionDeleted => Interlocked.Read(ref _retentionDeletedTotal);

    public void Purged(PurgedRows rows)
    {
        _retentionDeleted.Add(rows.Instances, new KeyValuePair<string, object?>("table", "instances"));
        _retentionDeleted.Add(rows.History, new KeyValuePair<string, object?>("table", "history"));
        _retentionDeleted.Add(rows.Signals, new KeyValuePair<string, object?>("table", "signals"));
        _retentionDeleted.Add(rows.Tasks, new KeyValuePair<string, object?>("table", "tasks"));
        _retentionDeleted.Add(rows.Deliveries, new KeyValuePair<string, object?>("table", "deliveries"));
        Interlocked.Add(ref _retentionDeletedTotal, rows.Total);
    }

    public void SignalAccepted() => _accepted.Add(1);

    /// <summary>A signal was applied by the node that received it, in one commit.</summary>
    public void AppliedOnArrival() => _onArrival.Add(1, new KeyValuePair<string, object?>("outcome", "applied"));

    /// <summary>A signal's commit on arrival failed its check (the instance moved, a signal was due): it was queued.</summary>
    public void AppliedOnArrivalFellBack() => _onArrival.Add(1, new KeyValuePair<string, object?>("outcome", "queued"));

    public void SignalHandled(double elapsedMs)
    {
        Interlocked.Increment(ref _handledTotal);
        _signalsHandled.Add(1);
        _runSeconds.Record(elapsedMs / 1000);
    }

    /// <summary>A wait point's write took <paramref name="elapsedMs"/>.</summary>
    public void Committed(double elapsedMs) => _commitSeconds.Record(elapsedMs / 1000);

    /// <summary>A claim took <paramref name="count"/> signals.</summary>
    public void Claimed(int count)
    {
        if (count > 0)
        {
            _claimBatch.Record(count);
        }
    }

    /// <summary>A worker claimed a signal that had been due for <paramref name="ageMs"/>.</summary>
    public void SignalClaimed(double ageMs)
    {
        SignalAgeAtClaim.Record(ageMs);
        _ageAtClaimSeconds.Record(Math.Max(0, ageMs) / 1000);
    }

    public void Conflict()
    {
        Interlocked.Increment(ref _conflictTotal);
        _conflicts.Add(1);
    }

    public void Retried()
    {
        Interlocked.Increment(ref _retryTotal);
        _retries.Add(1);
    }

    public void DeadLettered()
    {
        Interlocked.Increment(ref _deadLetterTotal);
        _deadLetters.Add(1);
    }

    public void IdlePoll() => Interlocked.Increment(ref _pollCycles);

    /// <summary>A committed write wrote <paramref name="count"/> deliveries to the outbox.</summary>
    public void EventsWrittenToOutbox(int count)
    {
        Interlocked.Add(ref _eventsWrittenTotal, count);
        _eventsWritten.Add(count);
    }

    /// <summary>
    /// An attempt of one delivery ended as <paramref name="outcome"/> (one of <see cref="DeliveryOutcomes"/>); a delivered one
    /// reached its receiver <paramref name="lagMs"/> after its commit. Its post took <paramref name="elapsedMs"/>, given for
    /// the first delivery of a request only (a batch is one post).
    /// </summary>
    public void DeliveryAttempted(string outcome, double? elapsedMs, double? lagMs)
    {
        _deliveryAttempts.Add(1, new KeyValuePair<string, object?>("outcome", outcome));
        if (elapsedMs is { } elapsed)
        {
            _deliverySeconds.Record(elapsed / 1000);
        }

        switch (outcome)
        {
            case DeliveryOutcomes.Success:
                Interlocked.Increment(ref _eventsDeliveredTotal);
                _eventsDelivered.Add(1);
                if (lagMs is { } lag)
                {
                    EventLag.Record(lag);
                    _eventLagSeconds.Record(Math.Max(0, lag) / 1000);
                }

                break;
            case DeliveryOutcomes.Retry:
                Interlocked.Increment(ref _deliveryRetriesTotal);
                break;
            case DeliveryOutcomes.DeadLettered:
                Interlocked.Increment(ref _eventsDeadLetteredTotal);
                _eventsDeadLettered.Add(1);
                break;
        }
    }

    /// <summary>
    /// An instrument whose value is read when a collector asks (the long-polls a node holds, the wake-ups it sent), never
    /// on the hot path.
    /// </summary>
    public void ObserveUpDown(string name, string unit, string description, Func<long> value) =>
        _meter.CreateObservableUpDownCounter(name, value, unit, description);

    /// <summary>A gauge of several attributed values, read when a collector asks.</summary>
    public ObservableGauge<long> ObserveGauge(string name, string unit, string description, Func<IEnumerable<Measurement<long>>> values) =>
        _meter.CreateObservableGauge(name, values, unit, description);

    /// <summary>A monotonic total read when a collector asks.</summary>
    public void ObserveTotal(string name, string unit, string description, Func<long> value) =>
        _meter.CreateObservableCounter(name, value, unit, description);

    public void Dispose() => _meter.Dispose();

    /// <summary>The durations' buckets: <see cref="LatencyHistogram"/>'s (GET /metrics), in seconds.</summary>
    private static readonly InstrumentAdvice<double> LatencySeconds = new()
    {
        HistogramBucketBoundaries = LatencyHistogram.UpperBoundsMs.Select(ms => ms / 1000).ToArray(),
    };
}

/// <summary>How one post of an event ended (the <c>outcome</c> of <c>workflow.events.delivery_attempts</c> and of its span).</summary>
public static class DeliveryOutcomes
{
    /// <summary>The receiver answered 2xx.</summary>
    public const string Success = "success";
    /// <summary>It failed and is tried again after a pause.</summary>
    public const string Retry = "retry";
    /// <summary>The receiver answered 410: its subscription is paused, the delivery waits for the resume.</summary>
    public const string Gone = "gone";
    /// <summary>It failed and its retry period or attempts are used up.</summary>
    public const string DeadLettered = "dead_lettered";
}
