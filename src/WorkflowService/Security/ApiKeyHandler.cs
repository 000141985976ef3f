using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Authentication;
using Microsoft.Extensions.Options;

namespace WorkflowService.Security;

public sealed class ApiKeyOptions : AuthenticationSchemeOptions
{
    /// <summary>The configured keys with their hashes decoded once.</summary>
    internal IReadOnlyList<(ApiKeySettings Key, byte[] Hash)> Keys { get; set; } = [];
}

/// <summary>
/// Authenticates the X-Api-Key header (or <c>Authorization: ApiKey &lt;key&gt;</c>, for clients that can only set that header,
/// such as a Prometheus scrape) against the configured SHA-256 hashes. The presented key is hashed and compared
/// with every configured hash in constant time, so neither timing nor order tells which key came close; the key itself is
/// never logged or kept.
/// </summary>
public sealed class ApiKeyHandler(IOptionsMonitor<ApiKeyOptions> options, ILoggerFactory logger, UrlEncoder encoder)
    : AuthenticationHandler<ApiKeyOptions>(options, logger, encoder)
{
    public const string SchemeName = "ApiKey";
    public const string HeaderName = "X-Api-Key";

    /// <summary>The scheme of an API key in the Authorization header: <c>Authorization: ApiKey &lt;key&gt;</c>.</summary>
    public const string AuthorizationPrefix = SchemeName + " ";

    /// <summary>Whether <paramref name="request"/> presents an API key, in either header (well-formed or not).</summary>
    public static bool Presents(HttpRequest request) => Presented(request, out _) is not Presentation.None;

    private enum Presentation { None, Key, Malformed }

    /// <summary>The key <paramref name="request"/> presents: X-Api-Key (exactly one, not empty), else <c>Authorization: ApiKey &lt;key&gt;</c>.</summary>
    private static Presentation Presented(HttpRequest request, out string key)
    {
        key = "";
        if (request.Headers.TryGetValue(HeaderName, out var values))
        {
            if (values.Count != 1 || string.IsNullOrEmpty(values[0]))
            {
                return Presentation.Malformed;
            }

            key = values[0]!;
            return Presentation.Key;
        }

        foreach (var header in request.Headers.Authorization)
        {
            if (header is not null && header.StartsWith(AuthorizationPrefix, StringComparison.OrdinalIgnoreCase))
            {
                key = header[AuthorizationPrefix.Length..].Trim();
                return request.Headers.Authorization.Count == 1 && key.Length > 0 ? Presentation.Key : Presentation.Malformed;
            }
        }

        return Presentation.None;
    }

    protected override Task<AuthenticateResult> HandleAuthenticateAsync()
    {
        switch (Presented(Request, out var presentedKey))
        {
            case Presentation.None:
                return Task.FromResult(AuthenticateResult.NoResult());
            case Presentation.Malformed:
                return Task.FromResult(AuthenticateResult.Fail("an API key must be one non-empty X-Api-Key header, or one 'Authorization: ApiKey <key>' header"));
        }

        var presented = SHA256.HashData(Encoding.UTF8.GetBytes(presentedKey));
        ApiKeySettings? match = null;
        foreach (var (key, hash) in Options.Keys)
        {
            if (CryptographicOperations.FixedTimeEquals(presented, hash))
            {
                match ??= key;
            }
        }

        if (match is null)
        {
            return Task.FromResult(AuthenticateResult.Fail("the API key is not valid"));
        }

        var identity = new ClaimsIdentity(SchemeName, WorkflowClaims.ActorType, WorkflowClaims.RoleType);
        identity.AddClaim(new Claim(WorkflowClaims.ActorType, match.Name));
        identity.AddClaims(match.Roles.Select(r => new Claim(WorkflowClaims.RoleType, r)));
        if (!string.IsNullOrEmpty(match.Tenant))
        {
            identity.AddClaim(new Claim(WorkflowClaims.TenantType, match.Tenant));
        }

        return Task.FromResult(AuthenticateResult.Success(new AuthenticationTicket(new ClaimsPrincipal(identity), SchemeName)));
    }

    protected override Task HandleChallengeAsync(AuthenticationProperties properties)
    {
        Response.StatusCode = StatusCodes.Status401Unauthorized;
        Response.Headers.Append("WWW-Authenticate", SchemeName);
        return Task.CompletedTask;
    }
}
