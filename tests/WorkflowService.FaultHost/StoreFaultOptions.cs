using System.ComponentModel.DataAnnotations;

namespace WorkflowService.FaultHost;

/// <summary>How often and how the decorated store calls fail (section FaultInjection).</summary>
internal sealed class StoreFaultOptions
{
    public const string Section = "FaultInjection";

    /// <summary>The share of decorated calls that fail, 0 to 1; each failing call fails in one of the four ways at random.</summary>
    [Range(0.0, 1.0)]
    public double Rate { get; set; }

    /// <summary>
    /// The share for one operation, by the decorated method's name without Async (ReplayDeadLetter, Commit, ...), over
    /// <see cref="Rate"/>: rare operations need a higher one to fail at all in a short run.
    /// </summary>
    public Dictionary<string, double> Operations { get; init; } = new(StringComparer.Ordinal);

    /// <summary>How long a call that times out hangs before it fails.</summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:00:30")]
    public TimeSpan Delay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The random source's seed, so that a run can be repeated; 0 for a different one each start.</summary>
    public int Seed { get; set; }
}
