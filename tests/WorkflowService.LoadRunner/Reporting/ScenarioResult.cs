using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Reporting;

/// <summary>One scenario's row: the same fields in the Markdown table and in the JSON file.</summary>
internal sealed record ScenarioResult
{
    /// <summary>The full name with the backend prefix, e.g. postgres-signal-roundtrip-latency-serial.</summary>
    public required string Name { get; init; }

    /// <summary>The name without the prefix, the key shared by every backend and the predecessor.</summary>
    public required string Scenario { get; init; }

    public required string Tier { get; init; }
    public required int Ops { get; init; }
    public required int Concurrency { get; init; }

    /// <summary>The service's signal workers; null where the service did not run (the ceiling).</summary>
    public int? SignalWorkers { get; init; }

    public required double DurationMs { get; init; }
    public required double ThroughputPerSecond { get; init; }
    public LatencySummary? Latency { get; init; }

    /// <summary>Every phase the scenario measured; start, signalPublish and signalToCompletion where they apply.</summary>
    public Dictionary<string, LatencySummary> Phases { get; init; } = [];

    public required int Failures { get; init; }
    public List<string> FailureSamples { get; init; } = [];

    /// <summary>GET /dead-letters total after minus before; null where the service did not run.</summary>
    public int? DeadLettered { get; init; }

    /// <summary>
    /// Optimistic-concurrency retries during the measured part (GET /metrics runtimeConflicts, after minus before the
    /// measured part); null where the service did not run (the ceiling) or in reports from before the runner read it.
    /// </summary>
    public long? RuntimeConflicts { get; init; }

    /// <summary>The node's counters (GET /metrics) over the measured part, warm-up excluded; null where the service did not run.</summary>
    public NodeCounters? Node { get; init; }

    /// <summary>Instances of the scenario not terminal at its end with no pending signal and no open task; null where the service did not run.</summary>
    public int? StuckInstances { get; init; }

    public double? ServiceCpuSeconds { get; init; }
    public long? ServicePeakWorkingSetBytes { get; init; }
    public double LoadClientCpuSeconds { get; init; }
    public double? DatabaseServerCpuSeconds { get; init; }
    public double MachineBusyCpuSeconds { get; init; }

    /// <summary>
    /// Share of the machine's cores that other processes (neither the service, nor this runner, nor PostgreSQL on a
    /// PostgreSQL run) kept busy during the measured part, in percent: how much the scenario competed for the CPU.
    /// </summary>
    public double OtherLoadPercent { get; init; }

    /// <summary>A scenario run while other processes took a quarter of the machine or more; its figures are marked.</summary>
    public const double DisturbedPercent = 25;

    /// <summary>The backend's own counters, after minus before (over the service process's life, warm-up included).</summary>
    public Dictionary<string, long> Counters { get; init; } = [];

    /// <summary>The operations the counters cover: measured plus warm-up.</summary>
    public int CounterOps { get; init; }

    /// <summary>Unmeasured warm-up operations before the measured part (see WarmUp).</summary>
    public int? WarmUpOps { get; init; }

    public double? WarmUpSeconds { get; init; }

    /// <summary>JIT time in the warm-up's last round over that round's wall-clock time; null where the scenario warms up once.</summary>
    public double? WarmUpJitShare { get; init; }

    /// <summary>Whether the warm-up ended because the JIT had settled (false: it warmed up once, or hit its time bound).</summary>
    public bool? WarmUpSettled { get; init; }

    /// <summary>Milliseconds the service spent JIT-compiling during the measured part (GET /metrics); null where it did not run.</summary>
    public double? ServiceJitMs { get; init; }

    /// <summary>Milliseconds this runner (load client or ceiling loop) spent JIT-compiling during the measured part.</summary>
    public double? LoadClientJitMs { get; init; }

    public Dictionary<string, double> Figures { get; init; } = [];
    public string? Preparation { get; init; }
    public List<string> Notes { get; init; } = [];

    public bool Correct => Failures == 0 && DeadLettered is null or 0 && StuckInstances is null or 0;
}
