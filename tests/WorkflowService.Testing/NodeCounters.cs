using System.Text.Json.Nodes;

namespace WorkflowService.Testing;

/// <summary>
/// The service node's own counters (GET /metrics): totals since the node started, or — in a report — the difference of
/// two readings (<see cref="Minus"/>), which is what a scenario reports.
/// </summary>
internal sealed record NodeCounters
{
    /// <summary>Signals this node's workers handled.</summary>
    public long SignalsHandled { get; init; }

    /// <summary>Optimistic-concurrency retries: a commit that lost the race on the instance version and ran again (workflow.commit.conflicts).</summary>
    public long RuntimeConflicts { get; init; }

    /// <summary>Failed runs retried later with backoff (workflow.runs.retried).</summary>
    public long RunsRetried { get; init; }

    /// <summary>Signals the engine dead-lettered.</summary>
    public long SignalsDeadLettered { get; init; }

    /// <summary>Dispatcher look-ups that found nothing due.</summary>
    public long IdlePolls { get; init; }

    /// <summary>Wake-ups this node's commits asked to send to other nodes (0 on the in-process transport).</summary>
    public long WakeUpsRequested { get; init; }

    /// <summary>Wake-ups actually sent (PostgreSQL NOTIFY): fewer than requested when coalesced.</summary>
    public long WakeUpsSent { get; init; }

    /// <summary>Methods the service's runtime has JIT-compiled since it started (System.Runtime.JitInfo).</summary>
    public long JitCompiledMethods { get; init; }

    /// <summary>Milliseconds the service's runtime has spent JIT-compiling since it started (all threads).</summary>
    public double JitCompilationMs { get; init; }

    /// <summary>Rows the node's retention job deleted (instances, history, signals, tasks together).</summary>
    public long RetentionRowsDeleted { get; init; }

    /// <summary>Long-polls the node held at the (later) reading.</summary>
    public int LongPollsWaiting { get; init; }

    /// <summary>
    /// Signals claimed per bucket of their age at the claim (due time, or creation, to claim; store clock), the buckets'
    /// upper bounds in <see cref="AgeAtClaimBoundsMs"/> (null: no bound). Empty in reports written before the node had it.
    /// </summary>
    public IReadOnlyList<long> AgeAtClaimCounts { get; init; } = [];

    public IReadOnlyList<double?> AgeAtClaimBoundsMs { get; init; } = [];

    /// <summary>
    /// The bucket bound under which a share <paramref name="quantile"/> of the claims fell (the percentile, rounded up to the
    /// bucket it lies in); null when nothing was claimed, infinity when it lies above the last bound.
    /// </summary>
    public double? AgeAtClaimPercentileMs(double quantile)
    {
        var total = AgeAtClaimCounts.Sum();
        if (total == 0)
        {
            return null;
        }

        var rank = (long)Math.Ceiling(quantile * total);
        long seen = 0;
        for (var i = 0; i < AgeAtClaimCounts.Count; i++)
        {
            seen += AgeAtClaimCounts[i];
            if (seen >= rank)
            {
                return AgeAtClaimBoundsMs[i] ?? double.PositiveInfinity;
            }
        }

        return double.PositiveInfinity;
    }

    /// <summary>Whether the node's wake-up transport delivered notifications at the (later) reading.</summary>
    public bool WakeUpHealthy { get; init; }

    /// <summary>Sent per requested wake-up: 1 when every request was sent, lower when commits were coalesced; null when none was requested.</summary>
    public double? WakeUpsSentPerRequested => WakeUpsRequested > 0 ? Math.Round(WakeUpsSent / (double)WakeUpsRequested, 3) : null;

    /// <summary>Parses GET /metrics; a missing field is an error (the endpoint's contract changed), never a silent zero.</summary>
    public static NodeCounters Parse(JsonObject metrics)
    {
        long Count(string name) => metrics[name]?.GetValue<long>()
                                   ?? throw new InvalidOperationException($"GET /metrics has no '{name}': {metrics.ToJsonString()}");
        return new NodeCounters
        {
            SignalsHandled = Count("signalsHandled"),
            RuntimeConflicts = Count("runtimeConflicts"),
            RunsRetried = Count("runsRetried"),
            SignalsDeadLettered = Count("signalsDeadLettered"),
            IdlePolls = Count("idlePolls"),
            WakeUpsRequested = Count("wakeUpsRequested"),
            WakeUpsSent = Count("wakeUpsSent"),
            JitCompiledMethods = Count("jitCompiledMethods"),
            JitCompilationMs = metrics["jitCompilationMs"]?.GetValue<double>()
                               ?? throw new InvalidOperationException($"GET /metrics has no 'jitCompilationMs': {metrics.ToJsonString()}"),
            WakeUpHealthy = metrics["wakeUpHealthy"]?.GetValue<bool>()
                            ?? throw new InvalidOperationException($"GET /metrics has no 'wakeUpHealthy': {metrics.ToJsonString()}"),
            LongPollsWaiting = (int)Count("longPollsWaiting"),
            RetentionRowsDeleted = Count("retentionRowsDeleted"),
            AgeAtClaimCounts = Buckets(metrics).Select(b => b!["count"]!.GetValue<long>()).ToList(),
            AgeAtClaimBoundsMs = Buckets(metrics).Select(b => b!["upToMs"]?.GetValue<double>()).ToList(),
        };

        static JsonArray Buckets(JsonObject metrics) => metrics["signalAgeAtClaim"]?["buckets"]?.AsArray()
            ?? throw new InvalidOperationException($"GET /metrics has no 'signalAgeAtClaim.buckets': {metrics.ToJsonString()}");
    }

    /// <summary>This reading minus an earlier one of the same node; the health flag is this reading's.</summary>
    public NodeCounters Minus(NodeCounters earlier) => this with
    {
        SignalsHandled = SignalsHandled - earlier.SignalsHandled,
        RuntimeConflicts = RuntimeConflicts - earlier.RuntimeConflicts,
        RunsRetried = RunsRetried - earlier.RunsRetried,
        SignalsDeadLettered = SignalsDeadLettered - earlier.SignalsDeadLettered,
        IdlePolls = IdlePolls - earlier.IdlePolls,
        RetentionRowsDeleted = RetentionRowsDeleted - earlier.RetentionRowsDeleted,
        WakeUpsRequested = WakeUpsRequested - earlier.WakeUpsRequested,
        WakeUpsSent = WakeUpsSent - earlier.WakeUpsSent,
        JitCompiledMethods = JitCompiledMethods - earlier.JitCompiledMethods,
        JitCompilationMs = JitCompilationMs - earlier.JitCompilationMs,
        AgeAtClaimCounts = AgeAtClaimCounts.Select((count, i) => count - (i < earlier.AgeAtClaimCounts.Count ? earlier.AgeAtClaimCounts[i] : 0)).ToList(),
    };
}
