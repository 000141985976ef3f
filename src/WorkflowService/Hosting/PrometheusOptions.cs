using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Hosting;

/// <summary>
/// The Prometheus scrape endpoint ("Telemetry:Prometheus" section): the metrics a collector would receive over OTLP, in
/// Prometheus' text format, for a Prometheus that scrapes the nodes itself.
/// </summary>
public sealed class PrometheusOptions
{
    public const string Section = "Telemetry:Prometheus";

    /// <summary>Whether the endpoint is served (default false).</summary>
    public bool Enabled { get; set; }

    /// <summary>Where (default <c>/metrics/prometheus</c>); callers need the operator role, like GET /metrics.</summary>
    [RegularExpression("^/[A-Za-z0-9_./-]*$", ErrorMessage = "{0} must be a path starting with '/' (letters, digits, '_', '.', '-', '/').")]
    public string Path { get; set; } = "/metrics/prometheus";
}
