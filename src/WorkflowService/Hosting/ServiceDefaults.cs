using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;
using WorkflowService.Api;
using WorkflowService.CallOuts;
using WorkflowService.Diagrams;
using WorkflowService.Engine;
using WorkflowService.Engine.Configuration;
using WorkflowService.OperatorConsole;
using WorkflowService.Security;

namespace WorkflowService.Hosting;

/// <summary>One call wires logging, problem details, OpenAPI, health, the backend and the engine; one maps the API.</summary>
public static class ServiceDefaults
{
    /// <summary>Where mounted secrets live (Docker and Kubernetes secrets): one file per setting, named like Store__ConnectionString.</summary>
    public const string DefaultSecretsDirectory = "/run/secrets";

    public static WebApplicationBuilder AddWorkflowService(this WebApplicationBuilder builder)
    {
        // Secrets come from the environment or from files mounted here, never from a committed file; a file overrides
        // the same setting from anywhere else.
        builder.Configuration.AddSecretFiles(DefaultSecretsDirectory);
        ListenAddresses.Check(builder.Configuration);
        var services = builder.Services;
        services.AddWorkflowLogging(builder.Configuration);
        services.AddWorkflowTelemetry(builder.Configuration);

        services.AddProblemDetails(o => o.CustomizeProblemDetails = c =>
        {
            c.ProblemDetails.Instance ??= $"{c.HttpContext.Request.Method} {c.HttpContext.Request.Path}";
            c.ProblemDetails.Extensions["traceId"] = Logging.TraceId(c.HttpContext);
        });
        services.AddExceptionHandler<ApiExceptionHandler>();
        services.Configure<RouteHandlerOptions>(o => o.ThrowOnBadRequest = true);
        services.ConfigureHttpJsonOptions(o =>
        {
            o.SerializerOptions.Converters.Add(new JsonStringEnumConverter());
            o.SerializerOptions.DefaultIgnoreCondition = JsonIgnoreCondition.Never;
        });
        services.AddSettings<ApiOptions>(builder.Configuration.GetSection(ApiOptions.Section));
        services.AddRequestDeadlines();
        services.AddOptions<KestrelServerOptions>().Configure<IOptions<ApiOptions>>((kestrel, api) =>
            kestrel.Limits.MaxRequestBodySize = api.Value.MaxRequestBodyBytes);

        services.AddApiDocument(builder.Configuration);

        services.AddCallOuts(builder.Configuration);
        services.AddWorkflowSecurity(builder.Configuration);
        services.AddCallerLimits(builder.Configuration);
        services.AddHttpHardening(builder.Configuration);
        services.AddWorkflowBackend(builder.Configuration);
        services.AddWorkflowEngine(builder.Configuration);
        services.AddSingleton<DiagramRenderer>();
        services.AddOperatorConsole(builder.Configuration);
        services.AddSettings<HealthOptions>(builder.Configuration.GetSection(HealthOptions.Section));
        services.AddHealthChecks();
        // Registered with its configured timeout: past it the check counts as failed (Unhealthy) instead of hanging the probe.
        services.AddOptions<HealthCheckServiceOptions>().Configure<IOptions<HealthOptions>>((checks, health) => checks.Registrations.Add(
            new HealthCheckRegistration("store", p => ActivatorUtilities.CreateInstance<StoreHealthCheck>(p), HealthStatus.Unhealthy, ["ready"],
                health.Value.StoreTimeout)));
        return builder;
    }

    public static WebApplication MapWorkflowService(this WebApplication app)
    {
        app.UseWorkflowRequestLogging();
        app.UseHttpHardening();
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.UseMiddleware<RequestSizeLimit>();
        app.UseConsoleSession();
        app.UseAuthentication();
        app.UseConsoleSignInGate();
        app.UseRateLimiter();
        app.UseAuthorization();
        app.UseConsoleAntiforgery();
        app.UseRequestTimeouts();

        app.MapApiDocument();
        app.MapHealthChecks("/health/live", new HealthCheckOptions { Predicate = _ => false });
        app.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains("ready"), ResponseWriter = HealthReport.WriteAsync });

        // The API's endpoints answer within their request deadline even where a store call outlasts it.
        var api = app.MapGroup(string.Empty).AddEndpointFilter(StoreUnavailable.AnswerWithinDeadlineAsync);
        api.MapDefinitionEndpoints();
        api.MapInstanceEndpoints();
        api.MapBusinessKeyEndpoints();
        api.MapTaskEndpoints();
        api.MapMigrationEndpoints();
        // Not the operators' schema and retention work: it keeps its own budget within the request's time.
        app.MapLifecycleEndpoints();
        api.MapMetricsEndpoints();
        app.MapPrometheusEndpoint();
        api.MapSignalEndpoints();
        api.MapDeadLetterEndpoints();
        api.MapDiagramEndpoints();
        api.MapSubscriptionEndpoints();
        api.MapScheduleEndpoints();
        app.MapOperatorConsole();
        return app;
    }
}
