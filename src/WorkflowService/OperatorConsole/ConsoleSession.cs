using System.Security.Cryptography;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Security;

namespace WorkflowService.OperatorConsole;

/// <summary>
/// The console's sign-in: the API key or token a person pastes is kept, encrypted and time-limited, in a cookie scoped to
/// /console; each console request presents it to the API's own authentication as the Authorization header
/// (<see cref="ConsoleSession"/>), so the console sees exactly the identity, roles and tenant the API would. The cookie
/// is HttpOnly, SameSite=Lax, Secure (Console:SecureCookies) and never sent to the API's routes, so a page elsewhere
/// cannot act with it; the console's forms also carry an antiforgery token. Signing out revokes the session in the store
/// (<see cref="IRevocationList"/>), so a copy of the cookie is refused on every node.
/// </summary>
public sealed class ConsoleSessionCookie(IDataProtectionProvider protection, IOptions<ConsoleOptions> options, IHostEnvironment environment,
    IRevocationList revocations, TimeProvider time)
{
    public const string CookieName = "workflow-console";

    private readonly ITimeLimitedDataProtector _protector =
        protection.CreateProtector("WorkflowService.OperatorConsole.Session.v1").ToTimeLimitedDataProtector();

    // A protected token with many claims outgrows the ~4 KB a browser keeps in one cookie: it is split over several
    // (workflow-console, workflow-consoleC1, ...) and joined again when read.
    private static readonly ChunkingCookieManager Cookies = new();

    private readonly ConsoleCookieBuilder _cookie = new(options.Value.CookiesAlwaysSecure(environment))
    {
        Path = ConsolePaths.Root,
        HttpOnly = true,
        // Lax, not Strict: the way back from the issuer after single sign-on, and a link to an instance from a ticket or a chat,
        // are top-level navigations from another site that must arrive signed in. Cross-site posts are refused either way:
        // Lax does not send the cookie with them, and every form carries an antiforgery token.
        SameSite = SameSiteMode.Lax,
        IsEssential = true,
    };

    /// <summary>Keeps <paramref name="credential"/> for this browser: a token (three dot-separated parts) as a bearer token, anything else as an API key.</summary>
    public void SignIn(HttpContext context, string credential)
    {
        var header = LooksLikeToken(credential) ? $"Bearer {credential}" : $"{ApiKeyHandler.AuthorizationPrefix}{credential}";
        var lifetime = options.Value.SessionLifetime;
        Cookies.AppendResponseCookie(context, CookieName, _protector.Protect(header, time.GetUtcNow().Add(lifetime)), Options(context, lifetime));
    }

    /// <summary>Ends the session the request carries: revoked until it would have expired, then its cookie deleted.</summary>
    public async Task SignOutAsync(HttpContext context)
    {
        if (Presented(context) is { } cookie && Unprotect(cookie) is { } session)
        {
            await revocations.RevokeAsync(RevocationId(cookie), session.Expires - time.GetUtcNow(), context.RequestAborted).ConfigureAwait(false);
        }

        Forget(context);
    }

    /// <summary>Deletes the session cookie (one that has expired or was refused: nothing to revoke).</summary>
    public void Forget(HttpContext context) => Cookies.DeleteCookie(context, CookieName, Options(context, TimeSpan.Zero));

    /// <summary>The session cookie the request carries (joined from its chunks), or null.</summary>
    public static string? Presented(HttpContext context) => Cookies.GetRequestCookie(context, CookieName) is { Length: > 0 } cookie ? cookie : null;

    /// <summary>
    /// The Authorization header the cookie holds; null when it has expired, was signed out, or was written with a key this
    /// node lacks.
    /// </summary>
    public async Task<string?> ReadAsync(string cookie, CancellationToken cancellationToken) =>
        Unprotect(cookie) is { } session && !await revocations.IsRevokedAsync(RevocationId(cookie), cancellationToken).ConfigureAwait(false)
            ? session.Header
            : null;

    private (string Header, DateTimeOffset Expires)? Unprotect(string cookie)
    {
        try
        {
            return _protector.Unprotect(cookie, out var expires) is { } header && expires > time.GetUtcNow() ? (header, expires) : null;
        }
        catch (CryptographicException)
        {
            return null;
        }
    }

    /// <summary>A session's name in the revocation list: the hash of its cookie, which no one can turn back into the credential.</summary>
    private static string RevocationId(string cookie) =>
        "console-session:" + System.Buffers.Text.Base64Url.EncodeToString(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(cookie)));

    private static bool LooksLikeToken(string credential) => credential.Count(c => c == '.') == 2 && !credential.Contains(' ', StringComparison.Ordinal);

    private CookieOptions Options(HttpContext context, TimeSpan lifetime)
    {
        var cookie = _cookie.Build(context);
        cookie.MaxAge = lifetime > TimeSpan.Zero ? lifetime : null;
        return cookie;
    }
}

/// <summary>
/// Presents a console request's session (<see cref="ConsoleSessionCookie"/>) as its Authorization header, before
/// authentication runs; sets the console pages' security headers (nothing but this node's own script and styles).
/// </summary>
public sealed class ConsoleSession(RequestDelegate next, ConsoleSessionCookie sessions, IOptions<AuthenticationSettings> authentication)
{
    /// <summary>The longest credential the sign-in form takes (a token with many claims stays well under it).</summary>
    public const int MaxCredentialLength = 8192;

    private const string ContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'";

    public async Task InvokeAsync(HttpContext context)
    {
        if (!context.Request.Path.StartsWithSegments(ConsolePaths.Root, StringComparison.OrdinalIgnoreCase))
        {
            await next(context);
            return;
        }

        var headers = context.Response.Headers;
        headers.ContentSecurityPolicy = ContentSecurityPolicy;
        headers.XFrameOptions = "DENY";
        headers["Referrer-Policy"] = "same-origin";
        if (authentication.Value.HasScheme
            && !context.Request.Headers.ContainsKey(ApiKeyHandler.HeaderName)
            && context.Request.Headers.Authorization.Count == 0
            && ConsoleSessionCookie.Presented(context) is { } cookie)
        {
            context.Items[typeof(ConsoleSession)] = true;
            if (await sessions.ReadAsync(cookie, context.RequestAborted) is { } header)
            {
                context.Request.Headers.Authorization = header;
            }
        }

        await next(context);
    }

    /// <summary>Whether this request came with a console session (which, when it is not signed in now, has expired or was refused).</summary>
    public static bool HadSession(HttpContext context) => context.Items.ContainsKey(typeof(ConsoleSession));

}

/// <summary>
/// Sends a console visitor who is not signed in to the sign-in page (the API itself answers 401); runs after
/// authentication, so it sees the identity the session presented, and before authorization, whose challenge would be
/// the API's 401.
/// </summary>
public sealed class ConsoleSignInGate(RequestDelegate next, ConsoleSessionCookie sessions, IOptions<AuthenticationSettings> authentication)
{
    public Task InvokeAsync(HttpContext context)
    {
        var path = context.Request.Path;
        if (!path.StartsWithSegments(ConsolePaths.Root, StringComparison.OrdinalIgnoreCase)
            || !authentication.Value.HasScheme
            || context.User.Identity?.IsAuthenticated == true
            || path.StartsWithSegments(ConsolePaths.SignIn, StringComparison.OrdinalIgnoreCase)
            || path.StartsWithSegments(ConsolePaths.SignOut, StringComparison.OrdinalIgnoreCase)
            || path.StartsWithSegments(ConsolePaths.Assets, StringComparison.OrdinalIgnoreCase))
        {
            return next(context);
        }

        if (ConsoleSession.HadSession(context))
        {
            sessions.Forget(context);
        }

        if (HttpMethods.IsGet(context.Request.Method) && !path.StartsWithSegments(ConsolePaths.Live, StringComparison.OrdinalIgnoreCase))
        {
            var back = ConsolePaths.IsLocal(path + context.Request.QueryString) ? path + context.Request.QueryString : (string)ConsolePaths.Root;
            var reason = ConsoleSession.HadSession(context) ? "&expired=1" : "";
            context.Response.Redirect($"{ConsolePaths.SignIn}?returnUrl={Uri.EscapeDataString(back)}{reason}");
            return Task.CompletedTask;
        }

        // A form posted or a page's poll after the session ended: the API's answer, which the page's script turns into a reload.
        return Results.Problem("Sign in to the console first.", statusCode: StatusCodes.Status401Unauthorized, title: "Unauthorized")
            .ExecuteAsync(context);
    }
}
