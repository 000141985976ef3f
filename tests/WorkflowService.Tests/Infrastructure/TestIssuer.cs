using System.Security.Claims;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// A real OpenID Connect issuer on loopback, as far as a resource server sees one: a discovery document and a JWKS with
/// an RSA key made for the test run. The service under test reads both over HTTP, as it would from any issuer, and
/// validates the tokens this issuer signs.
/// </summary>
public sealed class TestIssuer : IAsyncDisposable
{
    private static readonly SemaphoreSlim Starting = new(1, 1);
    private static TestIssuer? _shared;
    private static readonly string[] SigningAlgorithms = ["RS256"];
    private static readonly string[] ResponseTypes = ["token", "code"];
    private static readonly string[] ChallengeMethods = ["S256"];
    private static readonly string[] SubjectTypes = ["public"];

    private readonly WebApplication _app;
    private readonly RsaSecurityKey _key;

    private TestIssuer(WebApplication app, RsaSecurityKey key) => (_app, _key) = (app, key);

    public Uri Address { get; private set; } = null!;

    public string Issuer => Address.ToString();

    public const string Audience = "workflow-service";

    /// <summary>One issuer for the whole test run (its key lives as long as the process).</summary>
    public static async Task<TestIssuer> SharedAsync()
    {
        await Starting.WaitAsync();
        try
        {
            return _shared ??= await StartAsync();
        }
        finally
        {
            Starting.Release();
        }
    }

    public static async Task<TestIssuer> StartAsync()
    {
        var key = new RsaSecurityKey(RSA.Create(2048)) { KeyId = Guid.NewGuid().ToString("N") };
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        var app = builder.Build();
        var issuer = new TestIssuer(app, key);
        app.MapGet("/.well-known/openid-configuration", () => Results.Json(new Dictionary<string, object>
        {
            ["issuer"] = issuer.Issuer,
            ["jwks_uri"] = new Uri(issuer.Address, "jwks").ToString(),
            ["authorization_endpoint"] = new Uri(issuer.Address, "authorize").ToString(),
            ["token_endpoint"] = new Uri(issuer.Address, "token").ToString(),
            ["code_challenge_methods_supported"] = ChallengeMethods,
            ["id_token_signing_alg_values_supported"] = SigningAlgorithms,
            ["response_types_supported"] = ResponseTypes,
            ["subject_types_supported"] = SubjectTypes,
        }));
        app.MapGet("/jwks", () =>
        {
            var parameters = key.Rsa.ExportParameters(includePrivateParameters: false);
            return Results.Json(new
            {
                keys = new[]
                {
                    new Dictionary<string, string>
                    {
                        ["kty"] = "RSA",
                        ["use"] = "sig",
                        ["alg"] = "RS256",
                        ["kid"] = key.KeyId,
                        ["n"] = Base64UrlEncoder.Encode(parameters.Modulus),
                        ["e"] = Base64UrlEncoder.Encode(parameters.Exponent),
                    },
                },
            });
        });
        app.MapGet("/authorize", issuer.Authorize);
        app.MapPost("/token", issuer.RedeemAsync);
        await app.StartAsync();
        issuer.Address = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First() + "/");
        return issuer;
    }

    /// <summary>The settings that make the service trust this issuer (over plain HTTP, which only a test may allow).</summary>
    public Dictionary<string, string?> Settings => new()
    {
        ["Authentication:Jwt:Authority"] = Issuer,
        ["Authentication:Jwt:Audience"] = Audience,
        ["Authentication:Jwt:RequireHttpsMetadata"] = "false",
    };

    /// <summary>
    /// An access token for <paramref name="subject"/> with <paramref name="roles"/> (and any <paramref name="claims"/>
    /// besides), signed by this issuer's key with RS256 and typed <c>JWT</c> unless <paramref name="algorithm"/> and
    /// <paramref name="tokenType"/> (the header's <c>typ</c>) say otherwise.
    /// </summary>
    public string Token(string subject, string[] roles, string audience = Audience, TimeSpan? lifetime = null, RsaSecurityKey? signedWith = null,
        IReadOnlyDictionary<string, object>? claims = null, string algorithm = SecurityAlgorithms.RsaSha256, string? tokenType = null)
    {
        var now = DateTime.UtcNow;
        var all = new Dictionary<string, object> { ["sub"] = subject, ["roles"] = roles };
        foreach (var (type, value) in claims ?? new Dictionary<string, object>())
        {
            all[type] = value;
        }

        return new JsonWebTokenHandler().CreateToken(new SecurityTokenDescriptor
        {
            Issuer = Issuer,
            Audience = audience,
            Claims = all,
            IssuedAt = now.AddMinutes(-10),
            NotBefore = now.AddMinutes(-10),
            Expires = now + (lifetime ?? TimeSpan.FromMinutes(10)),
            SigningCredentials = new SigningCredentials(signedWith ?? _key, algorithm),
            TokenType = tokenType,
        });
    }

    /// <summary>
    /// Who the issuer's sign-in page signs in, as if that person had typed their password (per client id, so that tests
    /// of different clients do not meet): the authorization code flow with PKCE, as a browser walks it.
    /// </summary>
    public void SignInAs(string clientId, string subject, params string[] roles) => _people[clientId] = (subject, roles);

    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, (string Subject, string[] Roles)> _people = new();
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, Grant> _codes = new();

    private sealed record Grant(string ClientId, string RedirectUri, string? Nonce, string Challenge, string Subject, string[] Roles);

    private IResult Authorize(HttpContext http)
    {
        var q = http.Request.Query;
        string? Get(string name) => q[name].FirstOrDefault();
        if (Get("response_type") != "code" || Get("code_challenge_method") != "S256" || Get("code_challenge") is not { Length: > 0 } challenge
            || Get("client_id") is not { } clientId || Get("redirect_uri") is not { } redirect || !_people.TryGetValue(clientId, out var person))
        {
            return Results.BadRequest("a code flow with PKCE (S256) for a client with a person to sign in is expected");
        }

        var code = Base64UrlEncoder.Encode(RandomNumberGenerator.GetBytes(32));
        _codes[code] = new Grant(clientId, redirect, Get("nonce"), challenge, person.Subject, person.Roles);
        return Results.Redirect($"{redirect}?code={Uri.EscapeDataString(code)}&state={Uri.EscapeDataString(Get("state") ?? "")}");
    }

    private async Task<IResult> RedeemAsync(HttpRequest request)
    {
        var form = await request.ReadFormAsync();
        if (form["grant_type"] != "authorization_code" || !_codes.TryRemove(form["code"].ToString(), out var grant)
            || form["redirect_uri"] != grant.RedirectUri || form["client_id"] != grant.ClientId
            || Base64UrlEncoder.Encode(SHA256.HashData(System.Text.Encoding.ASCII.GetBytes(form["code_verifier"].ToString()))) != grant.Challenge)
        {
            return Results.Json(new { error = "invalid_grant" }, statusCode: StatusCodes.Status400BadRequest);
        }

        var identity = new Dictionary<string, object> { ["sub"] = grant.Subject };
        if (grant.Nonce is { } nonce)
        {
            identity["nonce"] = nonce;
        }

        return Results.Json(new Dictionary<string, object>
        {
            ["access_token"] = Token(grant.Subject, grant.Roles),
            ["id_token"] = Token(grant.Subject, [], audience: grant.ClientId, claims: identity),
            ["token_type"] = "Bearer",
            ["expires_in"] = 600,
        });
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
