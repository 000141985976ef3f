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
    [RegularExpression("^(/[A-Za-z0-9_.-]+)+$", ErrorMessage = "{0} must be a path such as /metrics/prometheus: '/' and segments of letters, digits, '_', '.', '-'.")]
    [ScrapePath]
    public string Path { get; set; } = "/metrics/prometheus";

    /// <summary>A path of its own: none of the API's routes (GET /metrics included) or the health probes.</summary>
    [AttributeUsage(AttributeTargets.Property)]
    private sealed class ScrapePathAttribute : ValidationAttribute
    {
        // The first segments of the service's own routes, under which a scrape endpoint would shadow or clash with one.
        private static readonly string[] Taken =
            ["definitions", "instances", "tasks", "signals", "dead-letters", "migrations", "health", "openapi", "scalar"];

        protected override ValidationResult? IsValid(object? value, ValidationContext validationContext)
        {
            if (value is not string path || path.Length < 2)
            {
                return ValidationResult.Success;
            }

            var segments = path.Trim('/').Split('/');
            var clash = string.Equals(path.TrimEnd('/'), "/metrics", StringComparison.OrdinalIgnoreCase)
                        || Taken.Contains(segments[0], StringComparer.OrdinalIgnoreCase);
            return clash
                ? new ValidationResult($"{validationContext.DisplayName} '{path}' is a route of the API; choose a path of its own, such as /metrics/prometheus.")
                : ValidationResult.Success;
        }
    }
}
