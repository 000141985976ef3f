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
    private static readonly string[] ResponseTypes = ["token"];
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
    /// besides), signed by this issuer's key.
    /// </summary>
    public string Token(string subject, string[] roles, string audience = Audience, TimeSpan? lifetime = null, RsaSecurityKey? signedWith = null,
        IReadOnlyDictionary<string, object>? claims = null)
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
            SigningCredentials = new SigningCredentials(signedWith ?? _key, SecurityAlgorithms.RsaSha256),
        });
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
