using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;
using WorkflowService.Security;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// Single sign-on for the console: ASP.NET Core's OpenID Connect handler runs the authorization code flow (with PKCE)
/// against the issuer the API trusts; the access token it receives becomes the console session's credential
/// (<see cref="ConsoleSessionCookie"/>), so the API's bearer authentication, role mapping and tenant apply to it unchanged.
/// No cookie authentication of its own: the handler's result is never signed in.
/// </summary>
public static class ConsoleSingleSignOn
{
    public const string Scheme = "ConsoleOpenIdConnect";

    /// <summary>Where the issuer sends the browser back (under the sign-in path, which needs no session).</summary>
    public const string CallbackPath = "/console/sign-in/callback";

    /// <summary>Where the sign-in page's button starts the flow.</summary>
    public const string StartPath = "/console/sign-in/oidc";

    private static readonly string[] DefaultScopes = ["openid", "profile"];

    /// <summary>Adds the handler when Console:OpenIdConnect:ClientId is set (the settings' checks say what else it needs).</summary>
    public static void AddConsoleSingleSignOn(this IServiceCollection services, IConfiguration configuration)
    {
        if (string.IsNullOrWhiteSpace(configuration[$"{ConsoleOptions.Section}:OpenIdConnect:ClientId"]))
        {
            return;
        }

        services.AddAuthentication().AddOpenIdConnect(Scheme, "Single sign-on", _ => { });
        services.AddOptions<OpenIdConnectOptions>(Scheme).Configure<IOptions<AuthenticationSettings>, IOptions<ConsoleOptions>, IHostEnvironment>(
            (o, authentication, console, environment) =>
        {
            var jwt = authentication.Value.Jwt;
            var client = console.Value.OpenIdConnect;
            o.Authority = jwt.Authority;
            o.RequireHttpsMetadata = jwt.RequireHttpsMetadata;
            o.ClientId = client.ClientId;
            o.ClientSecret = string.IsNullOrEmpty(client.ClientSecret) ? null : client.ClientSecret;
            o.ResponseType = OpenIdConnectResponseType.Code;
            // The code comes back in the query of a top-level GET, which a SameSite=Lax cookie (the handler's correlation
            // and nonce cookies) accompanies, with no page of the issuer's that must run a script.
            o.ResponseMode = OpenIdConnectResponseMode.Query;
            o.UsePkce = true;
            o.CallbackPath = CallbackPath;
            // No sign-out at the issuer's request (front-channel) and no return from it: the console's sign-out ends its own
            // session only, and a request to the handler's default paths must not reach a sign-out no scheme here performs.
            o.RemoteSignOutPath = PathString.Empty;
            o.SignedOutCallbackPath = PathString.Empty;
            o.MapInboundClaims = false;
            o.SaveTokens = false;
            o.GetClaimsFromUserInfoEndpoint = false;
            o.Scope.Clear();
            foreach (var scope in client.Scopes.Count > 0 ? client.Scopes : DefaultScopes)
            {
                o.Scope.Add(scope);
            }

            var secure = console.Value.CookiesAlwaysSecure(environment) ? CookieSecurePolicy.Always : CookieSecurePolicy.SameAsRequest;
            o.CorrelationCookie.SameSite = SameSiteMode.Lax;
            o.CorrelationCookie.SecurePolicy = secure;
            o.NonceCookie.SameSite = SameSiteMode.Lax;
            o.NonceCookie.SecurePolicy = secure;
            o.Events.OnTokenValidated = SignedInAsync;
            o.Events.OnRemoteFailure = FailedAsync;
        });
    }

    public static IEndpointRouteBuilder MapConsoleSingleSignOn(this IEndpointRouteBuilder routes)
    {
        routes.MapGet(StartPath, (HttpContext http, IOptions<ConsoleOptions> options, string? returnUrl) =>
                options.Value.OpenIdConnect.IsConfigured
                    ? Results.Challenge(new AuthenticationProperties { RedirectUri = ConsolePaths.IsLocal(returnUrl) ? returnUrl : ConsolePaths.Instances }, [Scheme])
                    : Results.NotFound())
            .ExcludeFromDescription()
            .AllowAnonymous();
        return routes;
    }

    /// <summary>The issuer answered with valid tokens: keep the access token as the session, and go where the person was going.</summary>
    private static Task SignedInAsync(TokenValidatedContext context)
    {
        if (context.TokenEndpointResponse?.AccessToken is not { Length: > 0 and <= ConsoleSession.MaxCredentialLength } accessToken)
        {
            context.Fail("the issuer returned no access token");
            return Task.CompletedTask;
        }

        context.HttpContext.RequestServices.GetRequiredService<ConsoleSessionCookie>().SignIn(context.HttpContext, accessToken);
        var back = context.Properties?.RedirectUri;
        context.Response.Redirect(ConsolePaths.IsLocal(back) ? back! : ConsolePaths.Instances);
        context.HandleResponse();
        return Task.CompletedTask;
    }

    /// <summary>A refused or failed sign-in at the issuer: back to the sign-in page, which says so (the reason goes to the log only).</summary>
    private static Task FailedAsync(RemoteFailureContext context)
    {
        context.Response.Redirect($"{ConsolePaths.SignIn}?failed=1");
        context.HandleResponse();
        return Task.CompletedTask;
    }
}

/// <summary>
/// Single sign-on needs the issuer the API trusts: a client id without Authentication:Jwt:Authority stops the start. Cookies
/// that may travel over plain HTTP are for Development only.
/// </summary>
public sealed class ConsoleOptionsValidator(IOptions<AuthenticationSettings> authentication, IHostEnvironment environment) : IValidateOptions<ConsoleOptions>
{
    public ValidateOptionsResult Validate(string? name, ConsoleOptions options)
    {
        var failures = new List<string>();
        if (options.OpenIdConnect.IsConfigured && !authentication.Value.Jwt.IsConfigured)
        {
            failures.Add("Console:OpenIdConnect:ClientId needs Authentication:Jwt:Authority: the console signs people in at the issuer the API trusts.");
        }

        if (options.SecureCookies == false && !environment.IsDevelopment())
        {
            failures.Add($"Console:SecureCookies=false lets the console's session travel over plain HTTP; it is allowed in the Development "
                + $"environment only, and this is {environment.EnvironmentName}. Remove it: the cookies are Secure behind a proxy that ends TLS too.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
