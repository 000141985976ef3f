using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;
using Serilog;
using WorkflowService.Api;
using WorkflowService.Diagrams;
using WorkflowService.Engine;
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
        var secrets = builder.Configuration["Secrets:Directory"] ?? DefaultSecretsDirectory;
        builder.Configuration.AddKeyPerFile(secrets, optional: true, reloadOnChange: false);
        var services = builder.Services;
        services.AddSerilog((provider, logger) => logger
            .ReadFrom.Configuration(builder.Configuration)
            .ReadFrom.Services(provider)
            .Enrich.FromLogContext()
            .WriteTo.Console(outputTemplate: "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:lj} {Properties:j}{NewLine}{Exception}"));

        services.AddProblemDetails(o => o.CustomizeProblemDetails = c =>
        {
            c.ProblemDetails.Instance ??= $"{c.HttpContext.Request.Method} {c.HttpContext.Request.Path}";
            c.ProblemDetails.Extensions["traceId"] = c.HttpContext.TraceIdentifier;
        });
        services.AddExceptionHandler<ApiExceptionHandler>();
        services.Configure<RouteHandlerOptions>(o => o.ThrowOnBadRequest = true);
        services.ConfigureHttpJsonOptions(o =>
        {
            o.SerializerOptions.Converters.Add(new JsonStringEnumConverter());
            o.SerializerOptions.DefaultIgnoreCondition = JsonIgnoreCondition.Never;
        });
        services.AddOptions<ApiOptions>().Bind(builder.Configuration.GetSection(ApiOptions.Section)).ValidateDataAnnotations().ValidateOnStart();
        services.AddOptions<KestrelServerOptions>().Configure<IOptions<ApiOptions>>((kestrel, api) =>
            kestrel.Limits.MaxRequestBodySize = api.Value.MaxRequestBodyBytes);

        services.AddApiDocument(builder.Configuration);

        services.AddOptions<CallOutOptions>().Bind(builder.Configuration.GetSection(CallOutOptions.Section)).ValidateDataAnnotations().ValidateOnStart();
        services.AddHttpClient(HttpCallOutClient.ClientName, c => c.Timeout = Timeout.InfiniteTimeSpan); // each attempt is bounded by its step's timeout
        services.AddSingleton<WorkflowService.Engine.Execution.ICallOutClient, HttpCallOutClient>();
        services.AddWorkflowSecurity(builder.Configuration);
        services.AddCallerLimits(builder.Configuration);
        services.AddHttpHardening(builder.Configuration);
        services.AddWorkflowBackend(builder.Configuration);
        services.AddWorkflowEngine(builder.Configuration);
        services.AddSingleton<DiagramRenderer>();
        services.AddHealthChecks().AddCheck<StoreHealthCheck>("store", tags: ["ready"]);
        return builder;
    }

    public static WebApplication MapWorkflowService(this WebApplication app)
    {
        app.UseSerilogRequestLogging();
        app.UseHttpHardening();
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.UseMiddleware<RequestSizeLimit>();
        app.UseAuthentication();
        app.UseRateLimiter();
        app.UseAuthorization();

        app.MapApiDocument();
        app.MapHealthChecks("/health/live", new HealthCheckOptions { Predicate = _ => false });
        app.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains("ready"), ResponseWriter = HealthReport.WriteAsync });

        app.MapDefinitionEndpoints();
        app.MapInstanceEndpoints();
        app.MapTaskEndpoints();
        app.MapMigrationEndpoints();
        app.MapMetricsEndpoints();
        app.MapSignalEndpoints();
        app.MapDeadLetterEndpoints();
        app.MapDiagramEndpoints();
        return app;
    }
}
