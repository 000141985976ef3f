using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Runtime;

/// <summary>The engine's telemetry settings ("Telemetry" section; the exporters themselves are the host's).</summary>
public sealed class TelemetryOptions
{
    public const string Section = "Telemetry";

    /// <summary>
    /// How old the <c>workflow.instances</c> gauge's count of instances by status (and <c>workflow.events.pending</c>'s of
    /// pending deliveries) may grow before a collector's read starts a new one (default 1 min); also the longest a count may take. Each count reads every instance's status once: on a
    /// large table, keep it long. Nothing is counted while no collector reads.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan InstanceCountInterval { get; set; } = TimeSpan.FromMinutes(1);
}
