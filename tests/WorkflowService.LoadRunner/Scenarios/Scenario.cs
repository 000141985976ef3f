namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// One benchmark scenario: its shape (operations, workload concurrency, signal workers) and how it is measured. The
/// runner owns everything around it: the service process, warm-up, counters, resources, correctness checks, reports.
/// </summary>
internal abstract class Scenario
{
    /// <summary>The name without the backend prefix, e.g. signal-roundtrip-latency-serial.</summary>
    public required string Name { get; init; }

    /// <summary>Latency, Throughput, Capacity, Soak, Smoke, Nightly, Scaled or Ceiling.</summary>
    public required string TierLabel { get; init; }

    public required int Ops { get; init; }
    public required int Concurrency { get; init; }

    /// <summary>The service's Workers__SignalWorkers for this scenario; the service restarts when it changes.</summary>
    public int SignalWorkers { get; init; } = 8;

    /// <summary>Whether --tier smoke (the correctness check CI runs) includes it: the Smoke scenarios, and short ones that say so.</summary>
    public virtual bool InSmokeTier => TierLabel == "Smoke";

    /// <summary>False for scenarios that talk to the database directly (the ceiling): the service is stopped meanwhile.</summary>
    public virtual bool NeedsService => true;

    /// <summary>
    /// Whether the scenario needs a second node beside the service (<see cref="ScenarioContext.Front"/>): an API-only node
    /// (no workers) on the same database and wake-up transport, whose long-polls learn of commits only from hints.
    /// </summary>
    public virtual bool NeedsFrontNode => false;

    /// <summary>
    /// A process the scenario started itself (a peer library's service) that stands in for the service in the resource
    /// columns (CPU, peak memory); null for none. Read after the warm-up.
    /// </summary>
    public virtual int? OwnProcessPid => null;

    /// <summary>Stops what the scenario started itself (a peer's process); the runner calls it after the measured part and on failure.</summary>
    public virtual ValueTask StopAsync() => ValueTask.CompletedTask;

    /// <summary>Why the scenario does not run on <paramref name="backend"/>, or null where it does.</summary>
    public virtual string? NotApplicableTo(string backend) => null;

    /// <summary>Settings the scenario's service runs with on top of the run's (environment variables, e.g. Retention__EndedInstances).</summary>
    public virtual IReadOnlyDictionary<string, string> ServiceSettings => NoSettings;

    private static readonly Dictionary<string, string> NoSettings = [];

    /// <summary>Definition files (relative to the repository root) the scenario starts instances of.</summary>
    public virtual IReadOnlyList<string> DefinitionFiles => [];

    /// <summary>Runs before the scenario with the service stopped (e.g. seeding history); null when there is nothing to do.</summary>
    public virtual Func<ScenarioContext, Task<string>>? Preparation => null;

    /// <summary>
    /// Whether the runner repeats the warm-up until the JIT has settled (<see cref="WarmUp"/>): true where timing is the
    /// point; the Smoke and Nightly tiers are correctness checks and warm up once.
    /// </summary>
    public virtual bool SettlesJit => TierLabel is not ("Smoke" or "Nightly");

    /// <summary>How many unmeasured operations one <see cref="WarmUpAsync"/> runs.</summary>
    public abstract int WarmUpOps { get; }

    /// <summary>Unmeasured operations once the service runs (JIT, connection pools, definition caches).</summary>
    public abstract Task WarmUpAsync(ScenarioContext context);

    /// <summary>The measured part.</summary>
    public abstract Task<Measurement> MeasureAsync(ScenarioContext context);
}
