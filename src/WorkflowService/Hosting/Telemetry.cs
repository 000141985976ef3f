using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Hosting;

/// <summary>
/// OpenTelemetry through the standard packages: the engine's spans and meter, ASP.NET Core, HttpClient (call-outs, which
/// carry the trace on), the runtime, and the store's own (Npgsql) where its project adds them. What is traced and
/// measured is always registered; the providers that collect it, and the OTLP exporter, exist only when an exporter is
/// configured with the standard <c>OTEL_EXPORTER_OTLP_ENDPOINT</c> (and <c>OTEL_EXPORTER_OTLP_PROTOCOL</c>,
/// <c>OTEL_SERVICE_NAME</c>, <c>OTEL_RESOURCE_ATTRIBUTES</c>, …), so that a node without one does no telemetry work on
/// its hot path.
/// </summary>
internal static class Telemetry
{
    public const string EndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT";
    public const string DefaultServiceName = "workflow-service";

    public static IServiceCollection AddWorkflowTelemetry(this IServiceCollection services, IConfiguration configuration)
    {
        services.ConfigureOpenTelemetryTracerProvider(tracing => tracing
            .AddSource(EngineTelemetry.SourceName)
            // Health probes every few seconds would drown the traces that matter.
            .AddAspNetCoreInstrumentation(o => o.Filter = context => !context.Request.Path.StartsWithSegments("/health"))
            .AddHttpClientInstrumentation());
        services.ConfigureOpenTelemetryMeterProvider(metrics => metrics
            .AddMeter(EngineMetrics.MeterName)
            .AddAspNetCoreInstrumentation()
            .AddHttpClientInstrumentation()
            .AddRuntimeInstrumentation());

        services.AddHostedService<TelemetryObservers>();
        services.AddSettings<PrometheusOptions>(configuration.GetSection(PrometheusOptions.Section));

        var otlp = Endpoint(configuration) is not null;
        var prometheus = PrometheusEnabled(configuration);
        if (otlp || prometheus)
        {
            var telemetry = services.AddOpenTelemetry()
                .ConfigureResource(resource => resource.AddService(
                    configuration["OTEL_SERVICE_NAME"] is { Length: > 0 } name ? name : DefaultServiceName,
                    serviceVersion: typeof(Telemetry).Assembly.GetName().Version?.ToString(3)))
                .WithMetrics(metrics =>
                {
                    if (prometheus)
                    {
                        metrics.AddPrometheusExporter();
                    }
                });
            if (otlp)
            {
                telemetry.WithTracing().UseOtlpExporter();
            }
        }

        return services;
    }

    /// <summary>
    /// Serves the Prometheus scrape endpoint where it is enabled, to operators of the default tenant (the figures count
    /// every tenant's work), as GET /metrics.
    /// </summary>
    public static WebApplication MapPrometheusEndpoint(this WebApplication app)
    {
        var options = app.Services.GetRequiredService<IOptions<PrometheusOptions>>().Value;
        if (options.Enabled)
        {
            app.MapPrometheusScrapingEndpoint(options.Path)
                .RequireAuthorization(Policies.Operate)
                .RequireAuthorization(policy => policy.RequireAssertion(context => context.User.Tenant().Length == 0));
        }

        return app;
    }

    // Read before the settings are checked (registration depends on it); a value that is not a boolean leaves it off here and
    // stops the start when PrometheusOptions is validated.
    private static bool PrometheusEnabled(IConfiguration configuration) =>
        bool.TryParse(configuration[$"{PrometheusOptions.Section}:Enabled"], out var enabled) && enabled;

    /// <summary>The OTLP endpoint, or null when none is configured; one that is not an absolute http(s) URI stops the start.</summary>
    public static Uri? Endpoint(IConfiguration configuration)
    {
        var value = configuration[EndpointVariable];
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }

        return Uri.TryCreate(value, UriKind.Absolute, out var uri) && uri.Scheme is "http" or "https"
            ? uri
            : throw ConfigurationChoice.Invalid(EndpointVariable,
                $"{EndpointVariable} '{value}' is not an absolute http:// or https:// address (for example http://otel-collector:4317)");
    }
}
