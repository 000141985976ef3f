using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.Extensions.Options;
using Microsoft.OpenApi;
using Scalar.AspNetCore;
using WorkflowService.Api;
using WorkflowService.Engine.Configuration;
using WorkflowService.Security;

namespace WorkflowService.Hosting;

/// <summary>
/// The OpenAPI document (/openapi/v1.json) that clients are generated from, and the reference page for people
/// (/scalar/v1), each mapped when the "OpenApi" section says so.
/// </summary>
public static class ApiDocument
{
    public static IServiceCollection AddApiDocument(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<ApiDocumentOptions>(configuration.GetSection(ApiDocumentOptions.Section));
        services.AddSingleton<IValidateOptions<ApiDocumentOptions>, ApiDocumentOptions.Validator>();

        // The web defaults also read numbers from JSON strings ("2" for 2). No contract needs that, and with it every integer
        // of the document is typed integer-or-string, which strict clients then have to accept everywhere.
        services.ConfigureHttpJsonOptions(o => o.SerializerOptions.NumberHandling = JsonNumberHandling.Strict);

        services.AddOpenApi(o =>
        {
            // Input, output, payloads and variables are any JSON value: inline JsonElement as the empty schema ({}) instead of
            // a named component, which client generators read as an object type and cannot fill with a number or a list.
            o.CreateSchemaReferenceId = type => type.Type == typeof(JsonElement) || type.Type == typeof(JsonElement?)
                ? null
                : OpenApiOptions.CreateDefaultSchemaReferenceId(type);
            // Every enum goes over the wire as its name (JsonStringEnumConverter), but the generated schema leaves out
            // "type": "string" (dotnet/aspnetcore#61303), so generators would take the enum for integers.
            o.AddSchemaTransformer((schema, context, _) =>
            {
                // A nullable enum's component lists null among the names: the property says whether it may be null.
                var type = Nullable.GetUnderlyingType(context.JsonTypeInfo.Type) ?? context.JsonTypeInfo.Type;
                if (type.IsEnum && schema.Enum is { Count: > 0 } && schema.Type is null)
                {
                    schema.Type = JsonSchemaType.String;
                    schema.Enum = [.. schema.Enum.Where(value => value is not null)];
                }

                return Task.CompletedTask;
            });
            o.AddSecurity();
            o.AddDocumentTransformer<ApiDocumentDescription>();
            o.AddDocumentTransformer<DefinitionSchemaTransformer>();
        });
        return services;
    }

    public static WebApplication MapApiDocument(this WebApplication app)
    {
        var options = app.Services.GetRequiredService<IOptions<ApiDocumentOptions>>().Value;
        if (options.Enabled)
        {
            app.MapOpenApi();
        }

        if (options.Enabled && options.ReferencePage)
        {
            // Scalar.AspNetCore serves the page's script from this node; nothing else may come from the internet either:
            // no fonts from Scalar's CDN (the browser's own fonts serve), no telemetry, no AI agent or MCP calls out.
            app.MapScalarApiReference(o => o
                .WithTitle("Workflow Service API")
                .DisableDefaultFonts()
                .DisableTelemetry()
                .DisableAgent()
                .DisableMcp()
                .AddPreferredSecuritySchemes(SecurityOpenApi.BearerScheme, ApiKeyHandler.SchemeName));
        }

        return app;
    }
}
