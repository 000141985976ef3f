using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

/// <summary>Checks the Authentication section at start-up; each message names its key and says what is expected.</summary>
public sealed class AuthenticationSettingsValidator(IHostEnvironment environment) : IValidateOptions<AuthenticationSettings>
{
    public ValidateOptionsResult Validate(string? name, AuthenticationSettings options)
    {
        var failures = new List<string>();
        if (options.Mode == AuthenticationMode.None && options.HasScheme)
        {
            failures.Add("Authentication:Mode=None turns authentication off, but a scheme is configured (Authentication:Jwt:Authority or "
                + "Authentication:ApiKeys): remove one of them.");
        }
        else if (options.Mode == AuthenticationMode.Auto && !options.HasScheme && !environment.IsDevelopment())
        {
            failures.Add("Authentication: no scheme is configured. Set Authentication:Jwt:Authority and Authentication:Jwt:Audience, or add "
                + "Authentication:ApiKeys, or set Authentication:Mode=None to run without authentication.");
        }

        var jwt = options.Jwt;
        if (jwt.IsConfigured)
        {
            if (!Uri.TryCreate(jwt.Authority, UriKind.Absolute, out var authority) || authority.Scheme is not ("https" or "http"))
            {
                failures.Add($"Authentication:Jwt:Authority must be an absolute http(s) URL; got '{jwt.Authority}'.");
            }
            else if (authority.Scheme == "http" && jwt.RequireHttpsMetadata)
            {
                failures.Add("Authentication:Jwt:Authority uses http; use https, or set Authentication:Jwt:RequireHttpsMetadata=false for a "
                    + "local issuer.");
            }

            if (string.IsNullOrWhiteSpace(jwt.Audience))
            {
                failures.Add("Authentication:Jwt:Audience is required with an authority: the audience tokens must be issued for.");
            }
        }

        for (var i = 0; i < jwt.Algorithms.Count; i++)
        {
            if (!JwtSettings.AsymmetricAlgorithms.Contains(jwt.Algorithms[i], StringComparer.Ordinal))
            {
                failures.Add($"Authentication:Jwt:Algorithms:{i} '{jwt.Algorithms[i]}' is not accepted: list signing algorithms checked with the "
                    + $"issuer's public key, among {string.Join(", ", JwtSettings.AsymmetricAlgorithms)}.");
            }
        }

        for (var i = 0; i < jwt.TokenTypes.Count; i++)
        {
            if (string.IsNullOrWhiteSpace(jwt.TokenTypes[i]))
            {
                failures.Add($"Authentication:Jwt:TokenTypes:{i} is empty: list the 'typ' header values of access tokens, such as at+jwt.");
            }
        }

        if (string.IsNullOrWhiteSpace(jwt.UserClaim))
        {
            failures.Add("Authentication:Jwt:UserClaim must name the claim holding the user id (default 'sub').");
        }

        if (string.IsNullOrWhiteSpace(jwt.RoleClaim))
        {
            failures.Add("Authentication:Jwt:RoleClaim must name the claim holding the roles (default 'roles').");
        }

        if (string.IsNullOrWhiteSpace(jwt.TenantClaim))
        {
            failures.Add("Authentication:Jwt:TenantClaim must name the claim holding the caller's tenant (default 'tenant').");
        }

        var names = new HashSet<string>(StringComparer.Ordinal);
        for (var i = 0; i < options.ApiKeys.Count; i++)
        {
            var key = options.ApiKeys[i];
            if (string.IsNullOrWhiteSpace(key.Name) || key.Name.Length > 200)
            {
                failures.Add($"Authentication:ApiKeys:{i}:Name is required (1 to 200 characters): it is recorded as the actor.");
            }
            else if (!names.Add(key.Name))
            {
                failures.Add($"Authentication:ApiKeys:{i}:Name '{key.Name}' is used by another key; names must be unique.");
            }

            if (key.Tenant is { } tenant && (string.IsNullOrWhiteSpace(tenant) || tenant.Length > WorkflowClaims.MaxTenantLength))
            {
                failures.Add($"Authentication:ApiKeys:{i}:Tenant must be 1 to {WorkflowClaims.MaxTenantLength} characters, or left out for the "
                    + "default tenant.");
            }

            if (key.Hash.Length != 64 || !key.Hash.All(char.IsAsciiHexDigit))
            {
                failures.Add($"Authentication:ApiKeys:{i}:Hash must be the SHA-256 of the key as 64 hex characters "
                    + "(printf %s \"$KEY\" | sha256sum); the key itself is never configured.");
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

/// <summary>Checks the Authorization section: only the service's own roles can be mapped.</summary>
public sealed class AuthorizationSettingsValidator : IValidateOptions<AuthorizationSettings>
{
    public ValidateOptionsResult Validate(string? name, AuthorizationSettings options)
    {
        var unknown = options.Roles.Keys.Where(k => !ServiceRoles.All.Contains(k, StringComparer.OrdinalIgnoreCase)).ToList();
        return unknown.Count == 0
            ? ValidateOptionsResult.Success
            : ValidateOptionsResult.Fail(unknown.Select(k =>
                $"Authorization:Roles:{k} is not a service role; the roles are {string.Join(", ", ServiceRoles.All)}."));
    }
}
