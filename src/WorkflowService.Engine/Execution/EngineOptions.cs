using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Execution;

/// <summary>Limits of one run between two wait points, and the retry policy of failing steps ("Engine" section).</summary>
public sealed class EngineOptions
{
    public const string Section = "Engine";

    /// <summary>Steps one run may execute before it is treated as a runaway loop (default 1,000).</summary>
    [Range(1, 1_000_000)]
    public int MaxStepsPerRun { get; set; } = 1_000;

    /// <summary>
    /// Wall time one run may take between two wait points, the start inside <c>POST /instances</c> included, before it
    /// is treated as a runaway and fails (default 5 s). Checked before every step; one expression is bounded by
    /// <c>Expressions:Timeout</c> and by what is left of this budget.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "00:10:00")]
    public TimeSpan MaxRunTime { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Attempts of a failing run before the instance faults and its signal is dead-lettered (default 3).</summary>
    [Range(1, 100)]
    public int MaxAttempts { get; set; } = 3;

    /// <summary>Delay before the first retry; doubles each attempt (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "01:00:00")]
    public TimeSpan RetryBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Upper bound of the retry delay (default 1 min).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "1.00:00:00")]
    public TimeSpan MaxRetryBackoff { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>Times a run is repeated after an optimistic-concurrency conflict before its signal is retried later (default 5).</summary>
    [Range(1, 100)]
    public int MaxConflictRetries { get; set; } = 5;

    /// <summary>How long a node reuses its answer to "latest version of definition X" (default 5 s; publishing on this node refreshes it at once).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "01:00:00")]
    public TimeSpan LatestDefinitionCacheTime { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Whether a signal for an instance that waits for it is applied by the node that receives it, in one commit, instead
    /// of being queued for a worker (default true; the queued path takes every signal it cannot apply at once).
    /// </summary>
    public bool ApplySignalsOnArrival { get; set; } = true;

    /// <summary>
    /// Instances whose last committed state this node keeps, so that a signal arriving for one needs no read (default
    /// 1,024: a few times the requests in flight; 0 keeps none). Only a guess: the commit checks the version.
    /// </summary>
    [Range(0, 1_000_000)]
    public int RecentInstances { get; set; } = 1_024;

    /// <summary>
    /// Items a forEach step may work over (default 1,000): its items and their state are kept with the instance and
    /// rewritten by every commit of it, so a longer array fails the run with a message that names this setting.
    /// </summary>
    [Range(0, 100_000)]
    public int MaxForEachItems { get; set; } = 1_000;

    public TimeSpan BackoffFor(int attempt)
    {
        var factor = Math.Pow(2, Math.Max(0, attempt - 1));
        var delay = TimeSpan.FromTicks((long)Math.Min(RetryBackoff.Ticks * factor, MaxRetryBackoff.Ticks));
        return delay;
    }
}
