using System.Text.Json.Nodes;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Hosting;
using WorkflowService.Hosting;
using WorkflowService.Security;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>Secure by default: the start-up checks of the Authentication and Authorization sections, and the open mode.</summary>
public sealed class SecurityConfigurationTests
{
    private const string ValidHash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    private static string? StartupMessage(Dictionary<string, string?> settings, string environment = "Production") =>
        StartupCheck.Message(settings, (services, configuration) => services
            .AddSingleton<IHostEnvironment>(new Environment(environment))
            .AddWorkflowSecurity(configuration));

    [Fact]
    public void Outside_development_a_node_without_any_scheme_refuses_to_start_and_says_what_to_set()
    {
        Assert.Equal("Authentication: no scheme is configured. Set Authentication:Jwt:Authority and Authentication:Jwt:Audience, or add "
                     + "Authentication:ApiKeys, or set Authentication:Mode=None to run without authentication.", StartupMessage([]));
        Assert.Null(StartupMessage([], "Development"));
        Assert.Null(StartupMessage(new() { ["Authentication:Mode"] = "None" }));
    }

    [Theory]
    [InlineData("Authentication:ApiKeys:0:Hash", "secret-in-plain-text",
        "Authentication:ApiKeys:0:Hash must be the SHA-256 of the key as 64 hex characters (printf %s \"$KEY\" | sha256sum); the key itself is never configured.")]
    [InlineData("Authentication:ApiKeys:0:Name", "",
        "Authentication:ApiKeys:0:Name is required (1 to 200 characters): it is recorded as the actor.")]
    [InlineData("Authentication:ApiKeys:0:Tenant", " ",
        "Authentication:ApiKeys:0:Tenant must be 1 to 100 characters, or left out for the default tenant.")]
    [InlineData("Authentication:Jwt:TenantClaim", "",
        "Authentication:Jwt:TenantClaim must name the claim holding the caller's tenant (default 'tenant').")]
    [InlineData("Authentication:Jwt:Algorithms:0", "HS256",
        "Authentication:Jwt:Algorithms:0 'HS256' is not accepted: list signing algorithms checked with the issuer's public key, among RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512.")]
    [InlineData("Authentication:Jwt:Algorithms:0", "none",
        "Authentication:Jwt:Algorithms:0 'none' is not accepted: list signing algorithms checked with the issuer's public key, among RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512.")]
    [InlineData("Authentication:Jwt:TokenTypes:0", " ",
        "Authentication:Jwt:TokenTypes:0 is empty: list the 'typ' header values of access tokens, such as at+jwt.")]
    [InlineData("Authentication:Mode", "None",
        "Authentication:Mode=None turns authentication off, but a scheme is configured (Authentication:Jwt:Authority or Authentication:ApiKeys): remove one of them.")]
    [InlineData("Authorization:Roles:superuser:0", "root",
        "Authorization:Roles:superuser is not a service role; the roles are application, operator, designer, admin.")]
    public void A_wrong_security_setting_fails_the_start_with_its_key(string key, string value, string message)
    {
        var settings = new Dictionary<string, string?> { ["Authentication:ApiKeys:0:Name"] = "app", ["Authentication:ApiKeys:0:Hash"] = ValidHash };
        settings[key] = value;
        Assert.Equal(message, StartupMessage(settings));
    }

    [Fact]
    public void A_bearer_authority_must_be_https_unless_allowed_and_needs_an_audience()
    {
        Assert.Equal("Authentication:Jwt:Authority uses http; use https, or set Authentication:Jwt:RequireHttpsMetadata=false for a local issuer. "
                     + "Authentication:Jwt:Audience is required with an authority: the audience tokens must be issued for.",
            StartupMessage(new() { ["Authentication:Jwt:Authority"] = "http://issuer.local/" }));
        Assert.Null(StartupMessage(new() { ["Authentication:Jwt:Authority"] = "https://issuer.example/", ["Authentication:Jwt:Audience"] = "wf" }));
    }

    [Fact]
    public async Task The_real_process_outside_development_exits_with_the_one_line_reason()
    {
        var (exitCode, output, error) = await TestServiceProcess.RunUntilExitAsync(new Dictionary<string, string?>());

        Assert.Equal(1, exitCode);
        Assert.StartsWith("Authentication: no scheme is configured.", error.Trim(), StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", error + output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_real_server_sends_no_banner_and_forbids_content_sniffing()
    {
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-banner-").FullName, "workflow.db");
        await using var node = await TestServiceProcess.StartAsync("banner", new Dictionary<string, string?> { ["Store:ConnectionString"] = $"Data Source={database}" });
        using var client = node.CreateClient();

        using var probe = await client.GetAsync("/health/live");
        using var api = await client.GetAsync("/definitions");
        foreach (var response in new[] { probe, api })
        {
            Assert.False(response.Headers.Contains("Server"), string.Join(",", response.Headers.Select(h => h.Key)));
            Assert.Equal("nosniff", response.Headers.GetValues("X-Content-Type-Options").Single());
        }

        Assert.Equal(System.Net.HttpStatusCode.OK, api.StatusCode);
    }

    private sealed class Environment(string name) : IHostEnvironment
    {
        public string EnvironmentName { get; set; } = name;
        public string ApplicationName { get; set; } = "WorkflowService";
        public string ContentRootPath { get; set; } = AppContext.BaseDirectory;
        public IFileProvider ContentRootFileProvider { get; set; } = new NullFileProvider();
    }
}

/// <summary>Development with no scheme runs open, and says so where operators look.</summary>
public sealed class OpenModeTests : SharedServiceTest<SqliteBackend>
{
    [Fact]
    public async Task Readiness_tells_that_authentication_is_off()
    {
        var ready = JsonNode.Parse(await Api.Http.GetStringAsync("/health/ready"))!;

        Assert.Equal("Healthy", (string?)ready["status"]);
        Assert.Equal(AuthenticationHealthCheck.OpenDescription, (string?)ready["checks"]!["authentication"]!["description"]);
    }
}
