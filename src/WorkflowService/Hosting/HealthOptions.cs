using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Hosting;

/// <summary>The readiness probe ("Health" section).</summary>
public sealed class HealthOptions
{
    public const string Section = "Health";

    /// <summary>
    /// Longest the store check of /health/ready waits for the database (default 3 s); past it the node reports Unhealthy,
    /// so that a paused or saturated database takes the node out of rotation instead of hanging its probe.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan StoreTimeout { get; set; } = TimeSpan.FromSeconds(3);
}
