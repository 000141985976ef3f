using System.Diagnostics.Metrics;

namespace WorkflowService.Engine.Runtime;

/// <summary>Engine counters, exported through System.Diagnostics.Metrics and readable as totals for reports.</summary>
public sealed class EngineMetrics : IDisposable
{
    public const string MeterName = "WorkflowService.Engine";

    private readonly Meter _meter;
    private readonly Counter<long> _started;
    private readonly Counter<long> _signalsHandled;
    private readonly Counter<long> _conflicts;
    private readonly Counter<long> _retries;
    private readonly Counter<long> _deadLetters;
    private readonly Histogram<double> _runMs;
    private readonly Histogram<double> _ageAtClaim;
    private long _conflictTotal;
    private long _deadLetterTotal;
    private long _retryTotal;
    private long _handledTotal;
    private long _pollCycles;

    public EngineMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _started = _meter.CreateCounter<long>("workflow.instances.started");
        _signalsHandled = _meter.CreateCounter<long>("workflow.signals.handled");
        _conflicts = _meter.CreateCounter<long>("workflow.runtime.conflicts", description: "optimistic-concurrency retries");
        _retries = _meter.CreateCounter<long>("workflow.runs.retried");
        _deadLetters = _meter.CreateCounter<long>("workflow.signals.dead_lettered");
        _runMs = _meter.CreateHistogram<double>("workflow.signal.processing", unit: "ms");
        _ageAtClaim = _meter.CreateHistogram("workflow.signal.age_at_claim", unit: "ms",
            description: "from a signal's due time (its creation, for one due at once) to its claim by a worker, by the store's clock",
            tags: null,
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = LatencyHistogram.UpperBoundsMs });
    }

    /// <summary>
    /// How long due signals waited for a worker: from the due time (a signal due at once: when it was written) to the claim,
    /// by the store's clock. Across nodes this is the wake-up's latency; where no hint arrived, the poll's.
    /// </summary>
    public LatencyHistogram SignalAgeAtClaim { get; } = new();

    public long Conflicts => Interlocked.Read(ref _conflictTotal);
    public long DeadLetters => Interlocked.Read(ref _deadLetterTotal);
    public long Retries => Interlocked.Read(ref _retryTotal);
    public long SignalsHandled => Interlocked.Read(ref _handledTotal);
    /// <summary>Completed dispatcher look-ups that found nothing due (lets tests wait for "the poll ran" without sleeping).</summary>
    public long IdlePolls => Interlocked.Read(ref _pollCycles);

    public void InstanceStarted() => _started.Add(1);

    public void SignalHandled(double elapsedMs)
    {
        Interlocked.Increment(ref _handledTotal);
        _signalsHandled.Add(1);
        _runMs.Record(elapsedMs);
    }

    /// <summary>A worker claimed a signal that had been due for <paramref name="ageMs"/>.</summary>
    public void SignalClaimed(double ageMs)
    {
        SignalAgeAtClaim.Record(ageMs);
        _ageAtClaim.Record(Math.Max(0, ageMs));
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

    public void Dispose() => _meter.Dispose();
}
