namespace WorkflowService.Security;

/// <summary>How callers prove who they are ("Authentication" section).</summary>
public sealed class AuthenticationSettings
{
    public const string Section = "Authentication";

    /// <summary>
    /// Auto (default): the configured schemes are required; with none configured the service refuses to start outside
    /// Development, and runs open (with a warning) in Development. None: no authentication at all, said so at start-up
    /// and on /health/ready; only valid with no scheme configured.
    /// </summary>
    public AuthenticationMode Mode { get; set; } = AuthenticationMode.Auto;

    public JwtSettings Jwt { get; set; } = new();

    /// <summary>Keys for service-to-service callers, sent in the X-Api-Key header; only their SHA-256 hashes are configured.</summary>
    public IList<ApiKeySettings> ApiKeys { get; } = [];

    public bool HasScheme => Jwt.IsConfigured || ApiKeys.Count > 0;
}

public enum AuthenticationMode
{
    Auto,
    None,
}

/// <summary>Bearer tokens from an OpenID Connect issuer: keys and issuer come from its discovery document.</summary>
public sealed class JwtSettings
{
    /// <summary>The issuer's base address (its /.well-known/openid-configuration is read); empty: no JWT scheme.</summary>
    public string? Authority { get; set; }

    /// <summary>The audience tokens must carry (the "aud" claim); required with an authority.</summary>
    public string? Audience { get; set; }

    /// <summary>Refuse an authority over plain HTTP (default true; false only for a local issuer in development or tests).</summary>
    public bool RequireHttpsMetadata { get; set; } = true;

    /// <summary>The claim holding the caller's user id (recorded as the actor; matched against task assignees).</summary>
    public string UserClaim { get; set; } = "sub";

    /// <summary>The claim holding the caller's roles (one claim per role, or a JSON array).</summary>
    public string RoleClaim { get; set; } = "roles";

    /// <summary>
    /// The claim holding the caller's tenant (default "tenant"): the caller sees only that tenant's definitions, instances,
    /// tasks, signals and dead letters. A token without it is in the default tenant.
    /// </summary>
    public string TenantClaim { get; set; } = "tenant";

    /// <summary>
    /// The token types (the JOSE <c>typ</c> header) accepted; none listed: <see cref="DefaultTokenTypes"/>. List only
    /// <c>at+jwt</c> when the issuer marks its access tokens as RFC 9068 says, and a token of any other type is refused.
    /// </summary>
    public IList<string> TokenTypes { get; } = [];

    /// <summary>The signing algorithms accepted, among <see cref="AsymmetricAlgorithms"/>; none listed: all of them.</summary>
    public IList<string> Algorithms { get; } = [];

    /// <summary>
    /// An RFC 9068 access token (<c>at+jwt</c>), and <c>JWT</c>, which most issuers write on theirs (and on ID tokens, which
    /// the claims only they carry tell apart: see <see cref="SecurityRegistration"/>).
    /// </summary>
    public static readonly string[] DefaultTokenTypes = ["at+jwt", "application/at+jwt", "JWT"];

    /// <summary>Signatures made with a private key and checked with the issuer's published public key: never none, never HS*.</summary>
    public static readonly string[] AsymmetricAlgorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"];

    public IReadOnlyList<string> AcceptedTokenTypes => TokenTypes.Count > 0 ? [.. TokenTypes] : DefaultTokenTypes;

    public IReadOnlyList<string> AcceptedAlgorithms => Algorithms.Count > 0 ? [.. Algorithms] : AsymmetricAlgorithms;

    public bool IsConfigured => !string.IsNullOrWhiteSpace(Authority);
}

/// <summary>One API key: a name (recorded as the actor), the SHA-256 of the key, its roles, and optionally its tenant.</summary>
public sealed class ApiKeySettings
{
    public string Name { get; set; } = "";

    /// <summary>Lower- or upper-case hex SHA-256 of the key's UTF-8 bytes (64 characters), e.g. from sha256sum.</summary>
    public string Hash { get; set; } = "";

    public IList<string> Roles { get; } = [];

    /// <summary>The tenant the key's caller sees (1 to 100 characters); none: the default tenant.</summary>
    public string? Tenant { get; set; }
}

/// <summary>Which claim roles grant the service's own roles ("Authorization" section).</summary>
public sealed class AuthorizationSettings
{
    public const string Section = "Authorization";

    /// <summary>
    /// Service role → the role values (from a token's role claim or a key's roles) that grant it. A service role not
    /// listed is granted by a role of its own name: "operator" grants operator.
    /// </summary>
    public IDictionary<string, IList<string>> Roles { get; } = new Dictionary<string, IList<string>>(StringComparer.OrdinalIgnoreCase);
}
