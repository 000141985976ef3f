using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.OpenApi;

namespace WorkflowService.Security;

/// <summary>
/// Declares both schemes in the OpenAPI document and, on every operation that needs a caller, the requirement (a bearer
/// token or an API key) and its 401/403 answers, so that generated clients carry credentials and Scalar asks for them.
/// </summary>
internal static class SecurityOpenApi
{
    public const string BearerScheme = "Bearer";

    public static void AddSecurity(this OpenApiOptions options)
    {
        options.AddDocumentTransformer((document, _, _) =>
        {
            document.Components ??= new OpenApiComponents();
            document.Components.SecuritySchemes ??= new Dictionary<string, IOpenApiSecurityScheme>();
            document.Components.SecuritySchemes[BearerScheme] = new OpenApiSecurityScheme
            {
                Type = SecuritySchemeType.Http,
                Scheme = "bearer",
                BearerFormat = "JWT",
                Description = "An access token from the OpenID Connect issuer configured in Authentication:Jwt.",
            };
            document.Components.SecuritySchemes[ApiKeyHandler.SchemeName] = new OpenApiSecurityScheme
            {
                Type = SecuritySchemeType.ApiKey,
                In = ParameterLocation.Header,
                Name = ApiKeyHandler.HeaderName,
                Description = "A key configured (as its SHA-256) in Authentication:ApiKeys.",
            };
            return Task.CompletedTask;
        });
        options.AddOperationTransformer((operation, context, _) =>
        {
            if (!context.Description.ActionDescriptor.EndpointMetadata.OfType<IAuthorizeData>().Any())
            {
                return Task.CompletedTask;
            }

            operation.Security ??= [];
            operation.Security.Add(new OpenApiSecurityRequirement { [new OpenApiSecuritySchemeReference(BearerScheme, context.Document)] = [] });
            operation.Security.Add(new OpenApiSecurityRequirement
            {
                [new OpenApiSecuritySchemeReference(ApiKeyHandler.SchemeName, context.Document)] = [],
            });
            operation.Responses ??= [];
            operation.Responses.TryAdd("401", Problem("No credentials, or credentials that are not valid", context.Document));
            operation.Responses.TryAdd("403", Problem("The caller's roles do not allow this operation", context.Document));
            operation.Responses.TryAdd("429", Problem("The caller sent too many requests; Retry-After says when to try again", context.Document));
            return Task.CompletedTask;
        });
    }

    private static OpenApiResponse Problem(string description, OpenApiDocument? document) => new()
    {
        Description = description,
        Content = new Dictionary<string, OpenApiMediaType>
        {
            ["application/problem+json"] = new() { Schema = new OpenApiSchemaReference("ProblemDetails", document) },
        },
    };
}
