using OpenTelemetry;
using Serilog;
using Serilog.Sinks.OpenTelemetry;
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
    public const string ProtocolVariable = "OTEL_EXPORTER_OTLP_PROTOCOL";
    public const string DefaultServiceName = "workflow-service";

    public static IServiceCollection AddWorkflowTelemetry(this IServiceCollection services, IConfiguration configuration)
    {
        var scrapePath = PrometheusEnabled(configuration)
            ? configuration[$"{PrometheusOptions.Section}:{nameof(PrometheusOptions.Path)}"] is { Length: > 0 } path ? path : new PrometheusOptions().Path
            : null;
        services.ConfigureOpenTelemetryTracerProvider(tracing => tracing
            .AddSource(EngineTelemetry.SourceName)
            // Health probes and scrapes every few seconds would drown the traces that matter.
            .AddAspNetCoreInstrumentation(o => o.Filter = context => !IsProbe(context, scrapePath))
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
                .ConfigureResource(resource => resource.AddService(ServiceName(configuration), serviceVersion: ServiceVersion))
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

    /// <summary>The Prometheus scrape endpoint's path where it is served; null where it is not.</summary>
    public static string? ScrapePath(PrometheusOptions options) => options.Enabled ? options.Path : null;

    /// <summary>
    /// A request an orchestrator or a collector repeats every few seconds (the health probes, Prometheus' scrape): neither
    /// traced nor logged at the default level.
    /// </summary>
    public static bool IsProbe(HttpContext context, string? scrapePath) =>
        context.Request.Path.StartsWithSegments("/health", StringComparison.Ordinal)
        || (scrapePath is not null && context.Request.Path.StartsWithSegments(scrapePath, StringComparison.OrdinalIgnoreCase));

    // Read before the settings are checked (registration depends on it); a value that is not a boolean leaves it off here and
    // stops the start when PrometheusOptions is validated.
    private static bool PrometheusEnabled(IConfiguration configuration) =>
        bool.TryParse(configuration[$"{PrometheusOptions.Section}:Enabled"], out var enabled) && enabled;

    /// <summary>
    /// Where an OTLP endpoint is configured, log events go there too, through Serilog's OpenTelemetry sink (Serilog is the
    /// service's only logging provider, so the SDK's own log pipeline would receive nothing), configured from the same
    /// standard variables read from the service's configuration (environment, mounted secrets): endpoint, protocol
    /// (<c>grpc</c> by default, <c>http/protobuf</c>), <c>OTEL_EXPORTER_OTLP_HEADERS</c>, the service's name and
    /// <c>OTEL_RESOURCE_ATTRIBUTES</c>. Each record carries the trace and span it was written in. The sink's own exports
    /// are kept out of the traces.
    /// </summary>
    public static LoggerConfiguration WriteToOtlp(this LoggerConfiguration logger, IConfiguration configuration)
    {
        if (Endpoint(configuration) is not { } endpoint)
        {
            return logger;
        }

        var http = configuration[ProtocolVariable] == "http/protobuf";
        var baseAddress = endpoint.AbsoluteUri.TrimEnd('/');
        return logger.WriteTo.OpenTelemetry(options =>
        {
            options.Protocol = http ? OtlpProtocol.HttpProtobuf : OtlpProtocol.Grpc;
            options.Endpoint = http ? $"{baseAddress}/v1/logs" : baseAddress;
            foreach (var (key, value) in Pairs(configuration["OTEL_EXPORTER_OTLP_HEADERS"]))
            {
                options.Headers[key] = Uri.UnescapeDataString(value);
            }

            foreach (var (key, value) in Pairs(configuration["OTEL_RESOURCE_ATTRIBUTES"]))
            {
                options.ResourceAttributes[key] = Uri.UnescapeDataString(value);
            }

            options.ResourceAttributes["service.name"] = ServiceName(configuration);
            if (ServiceVersion is { } version)
            {
                options.ResourceAttributes["service.version"] = version;
            }

            options.OnBeginSuppressInstrumentation = SuppressInstrumentationScope.Begin;
        }, ignoreEnvironment: true);
    }

    private static string ServiceName(IConfiguration configuration) =>
        configuration["OTEL_SERVICE_NAME"] is { Length: > 0 } name ? name : DefaultServiceName;

    private static string? ServiceVersion => typeof(Telemetry).Assembly.GetName().Version?.ToString(3);

    /// <summary>The <c>key=value,key=value</c> pairs of an OTEL_* list variable; malformed parts are skipped, as the SDK does.</summary>
    private static IEnumerable<(string Key, string Value)> Pairs(string? list)
    {
        foreach (var part in (list ?? "").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var equals = part.IndexOf('=', StringComparison.Ordinal);
            if (equals > 0)
            {
                yield return (part[..equals].Trim(), part[(equals + 1)..].Trim());
            }
        }
    }

    /// <summary>
    /// The OTLP endpoint, or null when none is configured; one that is not an absolute http(s) URI, or a protocol the
    /// exporters do not speak, stops the start.
    /// </summary>
    public static Uri? Endpoint(IConfiguration configuration)
    {
        var protocol = configuration[ProtocolVariable];
        if (!string.IsNullOrEmpty(protocol) && protocol is not ("grpc" or "http/protobuf"))
        {
            throw ConfigurationChoice.Invalid(ProtocolVariable,
                $"{ProtocolVariable} '{protocol}' is not supported; allowed values: grpc (the default), http/protobuf");
        }

        var value = configuration[EndpointVariable];
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }

        // An address with credentials in it is not repeated in the message (it goes to the console and the orchestrator's log).
        var shown = value.Contains('@', StringComparison.Ordinal) ? "(its value has credentials in it: not shown)" : $"'{value}'";
        return Uri.TryCreate(value, UriKind.Absolute, out var uri) && uri.Scheme is "http" or "https"
            ? uri
            : throw ConfigurationChoice.Invalid(EndpointVariable,
                $"{EndpointVariable} {shown} is not an absolute http:// or https:// address (for example http://otel-collector:4317)");
    }
}
