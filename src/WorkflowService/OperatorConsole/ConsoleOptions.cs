using System.ComponentModel.DataAnnotations;

namespace WorkflowService.OperatorConsole;

/// <summary>The operations console at /console ("Console" section).</summary>
public sealed class ConsoleOptions
{
    public const string Section = "Console";

    /// <summary>Whether the console is served (default true); off, /console answers 404 like any unknown path.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>How long a console sign-in lasts (default 8 hours); a pasted token's own expiry still ends it earlier.</summary>
    [Range(typeof(TimeSpan), "00:01:00", "7.00:00:00")]
    public TimeSpan SessionLifetime { get; set; } = TimeSpan.FromHours(8);

    /// <summary>How long an open instance page waits for the instance's next commit before it asks again (default 25 s).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:05:00")]
    public TimeSpan LiveWait { get; set; } = TimeSpan.FromSeconds(25);

    /// <summary>Rows per page in the console's lists (default 25).</summary>
    [Range(5, 200)]
    public int PageSize { get; set; } = 25;

    /// <summary>
    /// Where the Data Protection keys that protect console sessions and form tokens are kept (default: ASP.NET Core's
    /// per-user location, or memory where there is none). Several nodes behind one address must share one directory, or a
    /// session made on one node is refused by the next.
    /// </summary>
    public string? KeysDirectory { get; set; }

    /// <summary>
    /// Whether the console's cookies (session, form token, single sign-on) are always marked Secure. Unset (the default):
    /// always, except in the Development environment, where they follow the request's scheme. false is for plain-HTTP
    /// development and refused elsewhere; true makes Development secure too.
    /// </summary>
    public bool? SecureCookies { get; set; }

    /// <summary>Whether every console cookie is marked Secure, whatever scheme this node sees (a proxy may have ended TLS).</summary>
    public bool CookiesAlwaysSecure(IHostEnvironment environment) => SecureCookies ?? !environment.IsDevelopment();

    /// <summary>Sign-in with the issuer the API trusts (Authentication:Jwt:Authority), by the authorization code flow.</summary>
    public ConsoleOpenIdConnectOptions OpenIdConnect { get; set; } = new();
}

/// <summary>
/// The console as a client of the API's OpenID Connect issuer ("Console:OpenIdConnect"): a person signs in at the issuer
/// (code flow with PKCE), and the access token the issuer returns is the console session's credential, checked by the
/// API's bearer authentication like any other token.
/// </summary>
public sealed class ConsoleOpenIdConnectOptions
{
    /// <summary>The console's client id at the issuer; empty (the default): no single sign-on, the pasted credential only.</summary>
    public string? ClientId { get; set; }

    /// <summary>The client's secret, for an issuer that treats the console as a confidential client; empty for a public one (PKCE alone).</summary>
    public string? ClientSecret { get; set; }

    /// <summary>
    /// The scopes asked for (default openid, profile). Add the scope under which the issuer issues access tokens for
    /// Authentication:Jwt:Audience, or the API refuses the token the console gets.
    /// </summary>
    public IList<string> Scopes { get; } = [];

    public bool IsConfigured => !string.IsNullOrWhiteSpace(ClientId);
}
