using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.Security;

/// <summary>Authentication (bearer tokens, API keys), the role mapping and one policy per kind of operation.</summary>
public static class SecurityRegistration
{
    /// <summary>The default scheme: forwards to the API-key scheme when the X-Api-Key header is sent, else to bearer tokens.</summary>
    public const string DefaultScheme = "Workflow";

    public static IServiceCollection AddWorkflowSecurity(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<AuthenticationSettings>(configuration.GetSection(AuthenticationSettings.Section));
        services.AddSingleton<IValidateOptions<AuthenticationSettings>, AuthenticationSettingsValidator>();
        services.AddSettings<AuthorizationSettings>(configuration.GetSection(AuthorizationSettings.Section));
        services.AddSingleton<IValidateOptions<AuthorizationSettings>, AuthorizationSettingsValidator>();

        services.AddAuthentication(DefaultScheme)
            .AddPolicyScheme(DefaultScheme, "API key or bearer token", o => o.ForwardDefaultSelector = context =>
                ApiKeyHandler.Presents(context.Request)
                || !context.RequestServices.GetRequiredService<IOptions<AuthenticationSettings>>().Value.Jwt.IsConfigured
                    ? ApiKeyHandler.SchemeName
                    : JwtBearerDefaults.AuthenticationScheme)
            .AddScheme<ApiKeyOptions, ApiKeyHandler>(ApiKeyHandler.SchemeName, null)
            .AddJwtBearer();
        services.AddOptions<ApiKeyOptions>(ApiKeyHandler.SchemeName).Configure<IOptions<AuthenticationSettings>>((o, settings) =>
            o.Keys = [.. settings.Value.ApiKeys.Select(k => (k, Convert.FromHexString(k.Hash)))]);
        services.AddOptions<JwtBearerOptions>(JwtBearerDefaults.AuthenticationScheme).Configure<IOptions<AuthenticationSettings>>((o, settings) =>
        {
            var jwt = settings.Value.Jwt;
            if (!jwt.IsConfigured)
            {
                return;
            }

            o.Authority = jwt.Authority;
            o.Audience = jwt.Audience;
            o.RequireHttpsMetadata = jwt.RequireHttpsMetadata;
            o.MapInboundClaims = false;
            o.TokenValidationParameters.NameClaimType = jwt.UserClaim;
            o.TokenValidationParameters.RoleClaimType = jwt.RoleClaim;
            // An access token, signed with the issuer's private key: no other kind of token the issuer signs, and no
            // signature a public key could forge (none, HS*).
            o.TokenValidationParameters.ValidTypes = jwt.AcceptedTokenTypes;
            o.TokenValidationParameters.ValidAlgorithms = jwt.AcceptedAlgorithms;
            o.Events = new JwtBearerEvents { OnTokenValidated = RefuseIdTokens };
        });
        services.AddTransient<IClaimsTransformation, RoleMapping>();

        services.AddSingleton<IAuthorizationHandler, ServiceRoleHandler>();
        services.AddAuthorizationBuilder()
            .AddPolicy(Policies.ReadDefinitions, Require(Policies.ReadDefinitions))
            .AddPolicy(Policies.PublishDefinitions, Require(Policies.PublishDefinitions))
            .AddPolicy(Policies.ReadInstances, Require(Policies.ReadInstances))
            .AddPolicy(Policies.RunInstances, Require(Policies.RunInstances))
            .AddPolicy(Policies.Operate, Require(Policies.Operate))
            .AddPolicy(Policies.Administer, Require(Policies.Administer))
            .AddPolicy(Policies.ManageSubscriptions, Require(Policies.ManageSubscriptions))
            .AddPolicy(Policies.ManageSchedules, Require(Policies.ManageSchedules))
            .AddPolicy(Policies.Tasks, p => p.AddRequirements(new ServiceRoleRequirement([])))
            .AddPolicy(Policies.Console, p => p.AddRequirements(new ServiceRoleRequirement([])));
        services.AddHealthChecks().AddCheck<AuthenticationHealthCheck>("authentication", tags: ["ready"]);
        services.AddHostedService<AuthenticationModeNotice>();
        return services;
    }

    /// <summary>Claims that only an OpenID Connect ID token carries (OpenID Connect Core 1.0, sections 2 and 3.3.2.11).</summary>
    private static readonly string[] IdTokenClaims = ["nonce", "at_hash", "c_hash"];

    /// <summary>
    /// An ID token says who signed in to a client; it is not a grant to call an API, even when the client's id and the
    /// API's audience are the same. Most issuers type both kinds <c>JWT</c>, so the claims tell them apart.
    /// </summary>
    private static Task RefuseIdTokens(TokenValidatedContext context)
    {
        if (context.SecurityToken is Microsoft.IdentityModel.JsonWebTokens.JsonWebToken token
            && IdTokenClaims.FirstOrDefault(c => token.TryGetPayloadValue<object>(c, out _)) is { } claim)
        {
            context.Fail($"an ID token (it carries '{claim}') is not an access token");
        }

        return Task.CompletedTask;
    }

    private static Action<AuthorizationPolicyBuilder> Require(string policy) =>
        p => p.AddRequirements(new ServiceRoleRequirement(Policies.Grants[policy]));
}

/// <summary>Says on /health/ready whether callers are authenticated, so that an open node is visible to whoever probes it.</summary>
public sealed class AuthenticationHealthCheck(IOptions<AuthenticationSettings> options) : IHealthCheck
{
    public const string OpenDescription = "authentication is off: anyone who can reach this port can do anything";

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default) =>
        Task.FromResult(HealthCheckResult.Healthy(options.Value.HasScheme ? "callers are authenticated" : OpenDescription));
}

/// <summary>Warns at start-up when the node runs without authentication.</summary>
public sealed partial class AuthenticationModeNotice(IOptions<AuthenticationSettings> options, IHostEnvironment environment,
    ILogger<AuthenticationModeNotice> logger) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (!options.Value.HasScheme)
        {
            LogOpen(logger, options.Value.Mode == AuthenticationMode.None ? "Authentication:Mode=None" : $"the {environment.EnvironmentName} environment with no scheme configured");
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(Level = LogLevel.Warning, Message = "Authentication is OFF ({Reason}): anyone who can reach this port can do anything. "
        + "Configure Authentication:Jwt or Authentication:ApiKeys before exposing it.")]
    private static partial void LogOpen(ILogger logger, string reason);
}
