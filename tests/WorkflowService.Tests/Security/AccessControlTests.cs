using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text.Json.Nodes;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.Tokens;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Security;

/// <summary>
/// Who may do what, endpoint by endpoint, through the real authentication handlers: API keys made for the test and
/// bearer tokens signed by a test issuer whose discovery document and keys the service fetches over HTTP.
/// </summary>
public abstract class AccessControlTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static readonly TestApiKey Application = TestApiKey.Create("billing-app", "application");
    private static readonly TestApiKey Operator = TestApiKey.Create("ops-console", "operator");
    private static readonly TestApiKey Designer = TestApiKey.Create("modeler", "designer");
    private static readonly TestApiKey Admin = TestApiKey.Create("root", "admin");
    private static readonly TestApiKey NoServiceRole = TestApiKey.Create("underwriting-frontend", "underwriter");

    private TestIssuer _issuer = null!;

    protected override Dictionary<string, string?> Settings => new(
        TestApiKey.Settings(Application, Operator, Designer, Admin, NoServiceRole)
            .Concat(_issuer.Settings)
            .Append(new("Authorization:Roles:operator:0", "operator"))
            .Append(new("Authorization:Roles:operator:1", "ops-team"))
            // The issuer signs with RS256; PS256, which its RSA key could sign with too, is left out on purpose.
            .Append(new("Authentication:Jwt:Algorithms:0", "RS256"))
            .Append(new("Authentication:Jwt:Algorithms:1", "ES256")));

    /// <summary>What an OpenID Connect ID token carries and an access token does not.</summary>
    private static readonly Dictionary<string, object> IdTokenClaims = new() { ["nonce"] = "n-0S6_WzA2Mj", ["at_hash"] = "77QmUPtjPfzWtF2AnpK9RQ" };

    public override async ValueTask InitializeAsync()
    {
        _issuer = await TestIssuer.SharedAsync();
        await base.InitializeAsync();
    }

    /// <summary>A client that shows a redirect instead of following it (the console answers a stranger with one).</summary>
    private HttpClient Client() => Factory.CreateClient(new Microsoft.AspNetCore.Mvc.Testing.WebApplicationFactoryClientOptions { AllowAutoRedirect = false });

    private HttpClient WithKey(TestApiKey key)
    {
        var client = Client();
        client.DefaultRequestHeaders.Add("X-Api-Key", key.Key);
        return client;
    }

    private HttpClient WithToken(string token)
    {
        var client = Client();
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        return client;
    }

    /// <summary>Which service roles may call each endpoint: the specification this suite holds the service to.</summary>
    private static readonly Dictionary<string, string[]> Allowed = new()
    {
        ["POST /definitions/"] = ["designer", "admin"],
        ["GET /definitions/"] = ["application", "designer", "operator", "admin"],
        ["GET /definitions/{name}"] = ["application", "designer", "operator", "admin"],
        ["GET /definitions/{name}/versions/{version:int}"] = ["application", "designer", "operator", "admin"],
        ["GET /definitions/{name}/versions/{version:int}/diagram.svg"] = ["application", "designer", "operator", "admin"],
        ["GET /definitions/{name}/instances/{businessKey}"] = ["application", "operator", "admin"],
        ["POST /definitions/{name}/instances/{businessKey}/signals"] = ["application", "admin"],
        ["POST /definitions/{name}/instances/{businessKey}/signal-with-start"] = ["application", "admin"],
        ["POST /instances/"] = ["application", "admin"],
        ["POST /instances/{id:guid}/signals"] = ["application", "admin"],
        ["GET /instances/"] = ["application", "operator", "admin"],
        ["GET /instances/counts"] = ["application", "operator", "admin"],
        ["GET /instances/{id:guid}"] = ["application", "operator", "admin"],
        ["GET /instances/{id:guid}/history"] = ["application", "operator", "admin"],
        ["GET /instances/{id:guid}/signals"] = ["application", "operator", "admin"],
        ["GET /instances/{id:guid}/diagram.svg"] = ["application", "operator", "admin"],
        ["POST /instances/{id:guid}/cancel"] = ["operator", "admin"],
        ["POST /instances/{id:guid}/terminate"] = ["operator", "admin"],
        ["POST /instances/{id:guid}/suspend"] = ["operator", "admin"],
        ["POST /instances/{id:guid}/resume"] = ["operator", "admin"],
        ["POST /instances/{id:guid}/migrate"] = ["operator", "admin"],
        ["POST /instances/migrate"] = ["operator", "admin"],
        ["GET /admin/schema"] = ["operator", "admin"],
        ["POST /admin/schema/migrate"] = ["admin"],
        ["GET /admin/retention"] = ["operator", "admin"],
        ["POST /admin/retention/purge"] = ["admin"],
        ["GET /dead-letters/"] = ["operator", "admin"],
        ["POST /dead-letters/{id:guid}/replay"] = ["operator", "admin"],
        ["GET /signals/"] = ["operator", "admin"],
        ["GET /metrics/"] = ["operator", "admin"],
        ["POST /subscriptions/"] = ["designer", "admin"],
        ["GET /subscriptions/"] = ["designer", "admin"],
        ["GET /subscriptions/{id:guid}"] = ["designer", "admin"],
        ["PUT /subscriptions/{id:guid}"] = ["designer", "admin"],
        ["POST /subscriptions/{id:guid}/pause"] = ["designer", "admin"],
        ["POST /subscriptions/{id:guid}/resume"] = ["designer", "admin"],
        ["POST /subscriptions/{id:guid}/secret"] = ["designer", "admin"],
        ["DELETE /subscriptions/{id:guid}"] = ["designer", "admin"],
        ["GET /subscriptions/{id:guid}/deliveries"] = ["designer", "admin"],
        ["POST /subscriptions/{id:guid}/deliveries/{deliveryId:guid}/replay"] = ["designer", "admin"],
        ["POST /schedules/"] = ["designer", "admin"],
        ["GET /schedules/"] = ["designer", "admin"],
        ["GET /schedules/{id:guid}"] = ["designer", "admin"],
        ["PUT /schedules/{id:guid}"] = ["designer", "admin"],
        ["POST /schedules/{id:guid}/pause"] = ["designer", "admin"],
        ["POST /schedules/{id:guid}/resume"] = ["designer", "admin"],
        ["POST /schedules/{id:guid}/trigger"] = ["designer", "admin"],
        ["POST /schedules/{id:guid}/backfill"] = ["designer", "admin"],
        ["DELETE /schedules/{id:guid}"] = ["designer", "admin"],
        // The inbox takes any caller; each task then checks its assignee and candidate role (tested below).
        ["GET /tasks/"] = ["application", "designer", "operator", "admin", "none"],
        ["GET /tasks/{id:guid}"] = ["application", "designer", "operator", "admin", "none"],
        ["POST /tasks/{id:guid}/claim"] = ["application", "designer", "operator", "admin", "none"],
        ["POST /tasks/{id:guid}/complete"] = ["application", "designer", "operator", "admin", "none"],
    };

    /// <summary>What anyone may read: the probes and the API's own description (the document, and Scalar's page and assets).</summary>
    private static bool IsAnonymous(string endpoint) =>
        endpoint is "GET /health/live" or "GET /health/ready" or "GET /openapi/{documentName}.json" || endpoint.StartsWith("GET /scalar/", StringComparison.Ordinal)
        || IsConsoleSignIn(endpoint);

    /// <summary>What the console lets anyone reach: its sign-in (form, single sign-on, sign-out) and its style sheet and script.</summary>
    private static bool IsConsoleSignIn(string endpoint) =>
        endpoint is "GET /console/sign-in" or "POST /console/sign-in" or "POST /console/sign-out" or "GET /console/sign-in/oidc"
            or "GET /console/assets/{file}";

    /// <summary>The console's own pages and actions: who sees what there is ConsoleHttpTests' matrix (a page, not a problem, answers).</summary>
    private static bool IsConsole(string pattern) => pattern.StartsWith("/console/", StringComparison.Ordinal);

    private List<(string Method, string Pattern, bool Protected)> Endpoints() =>
        [.. Factory.Services.GetRequiredService<EndpointDataSource>().Endpoints.OfType<RouteEndpoint>()
            .SelectMany(e => (e.Metadata.GetMetadata<HttpMethodMetadata>()?.HttpMethods ?? ["GET"]).Select(m =>
                (m, "/" + e.RoutePattern.RawText!.TrimStart('/'),
                e.Metadata.GetOrderedMetadata<IAuthorizeData>().Count > 0 && e.Metadata.GetMetadata<IAllowAnonymous>() is null)))];

    private static HttpRequestMessage Request(string method, string pattern)
    {
        var path = pattern.Replace("{id:guid}", Guid.NewGuid().ToString(), StringComparison.Ordinal)
            .Replace("{deliveryId:guid}", Guid.NewGuid().ToString(), StringComparison.Ordinal)
            .Replace("{name}", "no-such-definition", StringComparison.Ordinal)
            .Replace("{businessKey}", "no-such-key", StringComparison.Ordinal)
            .Replace("{version:int}", "1", StringComparison.Ordinal);
        var request = new HttpRequestMessage(new HttpMethod(method), path);
        if (method is "POST" or "PUT")
        {
            request.Content = JsonContent.Create(new JsonObject());
        }

        return request;
    }

    [Fact]
    public async Task Every_endpoint_but_the_probes_and_the_api_description_answers_401_without_valid_credentials()
    {
        var endpoints = Endpoints();
        Assert.All(endpoints.Where(e => !e.Protected), e => Assert.True(IsAnonymous($"{e.Method} {e.Pattern}"), $"{e.Method} {e.Pattern} takes anyone"));
        Assert.Contains(endpoints, e => !e.Protected && e.Pattern == "/health/ready");
        var protectedEndpoints = endpoints.Where(e => e.Protected).ToList();
        Assert.Equal(Allowed.Keys.Order(), protectedEndpoints.Where(e => !IsConsole(e.Pattern)).Select(e => $"{e.Method} {e.Pattern}").Order());

        var otherIssuerKey = new RsaSecurityKey(RSA.Create(2048)) { KeyId = "not-the-issuers" };
        var callers = new (string What, HttpClient Client)[]
        {
            ("no credentials", Client()),
            ("an unknown API key", WithKey(TestApiKey.Create("stranger", "admin"))),
            ("a token signed by another key", WithToken(_issuer.Token("alice", ["admin"], signedWith: otherIssuerKey))),
            ("a token for another audience", WithToken(_issuer.Token("alice", ["admin"], audience: "another-service"))),
            ("an expired token", WithToken(_issuer.Token("alice", ["admin"], lifetime: TimeSpan.FromMinutes(-6)))),
            ("an ID token whose audience is the API", WithToken(_issuer.Token("alice", ["admin"], claims: IdTokenClaims))),
        };
        foreach (var (what, client) in callers)
        {
            using (client)
            {
                foreach (var (method, pattern, _) in protectedEndpoints)
                {
                    using var response = await client.SendAsync(Request(method, pattern));
                    if (IsConsole(pattern) && method == "GET" && !pattern.StartsWith("/console/live/", StringComparison.Ordinal))
                    {
                        // A console page sends a browser that is not signed in to the sign-in page instead.
                        Assert.True(response.StatusCode == HttpStatusCode.Redirect, $"{method} {pattern} with {what}: {(int)response.StatusCode}");
                        Assert.StartsWith("/console/sign-in?", response.Headers.Location?.OriginalString, StringComparison.Ordinal);
                        continue;
                    }

                    Assert.True(response.StatusCode == HttpStatusCode.Unauthorized, $"{method} {pattern} with {what}: {(int)response.StatusCode}");
                    Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
                }
            }
        }
    }

    [Fact]
    public async Task Each_role_reaches_the_endpoints_of_its_group_and_gets_403_elsewhere()
    {
        var callers = new (string Role, HttpClient Client)[]
        {
            ("application", WithKey(Application)),
            ("operator", WithKey(Operator)),
            ("designer", WithKey(Designer)),
            ("admin", WithKey(Admin)),
            ("none", WithKey(NoServiceRole)),
            ("operator", WithToken(_issuer.Token("olga", ["ops-team"]))),
            ("application", WithToken(_issuer.Token("app-user", ["application"]))),
            ("none", WithToken(_issuer.Token("bob", ["clerk"]))),
        };
        foreach (var (role, client) in callers)
        {
            using (client)
            {
                foreach (var (endpoint, roles) in Allowed)
                {
                    var (method, pattern) = (endpoint[..endpoint.IndexOf(' ', StringComparison.Ordinal)], endpoint[(endpoint.IndexOf(' ', StringComparison.Ordinal) + 1)..]);
                    using var response = await client.SendAsync(Request(method, pattern));
                    if (roles.Contains(role))
                    {
                        Assert.True(response.StatusCode is not (HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden),
                            $"{role} should reach {endpoint}: {(int)response.StatusCode}");
                    }
                    else
                    {
                        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.Forbidden);
                        Assert.DoesNotContain("Exception", problem.ToJsonString(), StringComparison.Ordinal);
                    }
                }
            }
        }
    }

    [Fact]
    public async Task A_mapped_claim_role_grants_its_service_role_and_the_plain_name_still_does()
    {
        using var mapped = WithToken(_issuer.Token("olga", ["ops-team"]));
        using var plain = WithToken(_issuer.Token("otto", ["operator"]));
        using var designerOnly = WithToken(_issuer.Token("dora", ["designer"]));

        Assert.Equal(HttpStatusCode.OK, (await mapped.GetAsync("/dead-letters")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await plain.GetAsync("/dead-letters")).StatusCode);
        Assert.Equal(HttpStatusCode.Forbidden, (await designerOnly.GetAsync("/dead-letters")).StatusCode);
    }

    [Fact]
    public async Task A_token_naming_the_services_own_claims_gains_nothing_by_it()
    {
        var forged = new Dictionary<string, object>
        {
            ["workflow:service-role"] = "admin",
            ["workflow:actor"] = "root",
            ["workflow:role"] = "operator",
        };
        using var client = WithToken(_issuer.Token("mallory", ["clerk"], claims: forged));

        await ApiClient.ProblemAsync(await client.GetAsync("/dead-letters"), HttpStatusCode.Forbidden);
        await ApiClient.ProblemAsync(await client.PostAsJsonAsync("/instances", new { definition = "anything" }), HttpStatusCode.Forbidden);
        var inbox = await client.GetFromJsonAsync<PageView<TaskView>>("/tasks?assignee=me", WorkflowServiceFactory.Json);
        Assert.All(inbox!.Items, t => Assert.True(t.Assignee is null or "mallory" && t.Role is null or "clerk"));
    }

    /// <summary>Issue #36: a token the issuer signed is a credential only when it is an access token signed as the settings allow.</summary>
    [Fact]
    public async Task Only_an_access_token_signed_with_an_accepted_algorithm_is_taken()
    {
        var refused = new (string What, string Token)[]
        {
            ("an ID token whose audience is the API", _issuer.Token("dora", ["designer"], claims: IdTokenClaims)),
            ("a token of another type (a logout token)", _issuer.Token("dora", ["designer"], tokenType: "logout+jwt")),
            ("a token signed with PS256, which the settings do not list", _issuer.Token("dora", ["designer"], algorithm: SecurityAlgorithms.RsaSsaPssSha256)),
            ("an unsigned token", Unsigned(_issuer.Token("dora", ["designer"]))),
        };
        var accepted = new (string What, string Token)[]
        {
            ("an access token typed JWT", _issuer.Token("dora", ["designer"])),
            ("an access token typed at+jwt (RFC 9068)", _issuer.Token("dora", ["designer"], tokenType: "at+jwt")),
        };

        foreach (var (what, token) in refused.Concat(accepted))
        {
            using var client = WithToken(token);
            using var response = await client.GetAsync("/definitions");
            var expected = accepted.Any(a => a.Token == token) ? HttpStatusCode.OK : HttpStatusCode.Unauthorized;
            Assert.True(response.StatusCode == expected, $"{what}: {(int)response.StatusCode}, expected {(int)expected}");
        }
    }

    /// <summary><paramref name="token"/> with its signature taken off and its header saying so (alg none).</summary>
    private static string Unsigned(string token)
    {
        var header = Base64UrlEncoder.Encode("""{"alg":"none","typ":"JWT"}""");
        return $"{header}.{token.Split('.')[1]}.";
    }

    [Fact]
    public async Task A_task_user_works_only_the_tasks_for_them_and_a_refused_claim_or_completion_changes_nothing()
    {
        var name = Definitions.Unique("secured-inbox");
        using var admin = WithKey(Admin);
        var adminApi = new ApiClient(admin);
        await adminApi.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "assess", "type": "humanTask", "title": "Assess", "role": "underwriter", "output": "assessment" },
                { "id": "sign", "type": "humanTask", "title": "Sign", "assignee": "'alice'", "output": "signature" },
                { "id": "done", "type": "complete", "result": "({ assessment: vars.assessment, signature: vars.signature })" }
              ]
            }
            """);
        var instance = await adminApi.StartAsync(name);
        var assess = await WaitForOpenTaskAsync(admin, instance.Id, "assess");

        using var alice = WithToken(_issuer.Token("alice", ["underwriter"]));
        using var bob = WithToken(_issuer.Token("bob", ["clerk"]));

        await ApiClient.ProblemAsync(await bob.PostAsJsonAsync($"/tasks/{assess.Id}/claim", new { }), HttpStatusCode.Forbidden);
        await ApiClient.ProblemAsync(await bob.PostAsJsonAsync($"/tasks/{assess.Id}/complete", new { result = new { ok = false } }),
            HttpStatusCode.Forbidden);
        await ApiClient.ProblemAsync(await bob.GetAsync($"/tasks/{assess.Id}"), HttpStatusCode.Forbidden);
        var untouched = await admin.GetFromJsonAsync<TaskView>($"/tasks/{assess.Id}", WorkflowServiceFactory.Json);
        Assert.Equal(HumanTaskStatus.Open, untouched!.Status);
        Assert.Null(untouched.ClaimedBy);
        Assert.Equal(InstanceStatus.Waiting, (await adminApi.GetAsync(instance.Id)).Status);
        Assert.DoesNotContain(await InboxAsync(bob, $"instanceId={instance.Id}"), t => t.Id == assess.Id);

        // Alice holds the candidate role: she sees, claims (only for herself) and completes it.
        Assert.Contains(await InboxAsync(alice, $"instanceId={instance.Id}"), t => t.Id == assess.Id);
        await ApiClient.ProblemAsync(await alice.PostAsJsonAsync($"/tasks/{assess.Id}/claim", new { user = "bob" }), HttpStatusCode.Forbidden);
        var claimed = await (await alice.PostAsJsonAsync($"/tasks/{assess.Id}/claim", new { })).Content.ReadFromJsonAsync<TaskView>(WorkflowServiceFactory.Json);
        Assert.Equal("alice", claimed!.ClaimedBy);
        Assert.Equal(HttpStatusCode.OK, (await alice.PostAsJsonAsync($"/tasks/{assess.Id}/complete", new { result = new { ok = true } })).StatusCode);

        // The next task is assigned to alice by name: assignee=me finds it from her token; bob's inbox stays empty of it.
        var sign = await WaitForOpenTaskAsync(admin, instance.Id, "sign");
        Assert.Contains(await InboxAsync(alice, "assignee=me&status=Open"), t => t.Id == sign.Id);
        Assert.DoesNotContain(await InboxAsync(bob, "assignee=me"), t => t.Id == sign.Id);
        await ApiClient.ProblemAsync(await bob.PostAsJsonAsync($"/tasks/{sign.Id}/complete", new { result = "forged" }), HttpStatusCode.Forbidden);
        Assert.Equal(HttpStatusCode.OK, (await alice.PostAsJsonAsync($"/tasks/{sign.Id}/complete", new { result = "signed" })).StatusCode);

        var done = await adminApi.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.True(done.Output!.Value.GetProperty("assessment").GetProperty("ok").GetBoolean());
        Assert.All((await adminApi.HistoryAsync(instance.Id)).Where(h => h.Type == "TaskCompleted"), h => Assert.Equal("alice", h.Actor));
        Assert.Equal("root", done.StartedBy);
        Assert.Equal("signed", done.Output!.Value.GetProperty("signature").GetString());
    }

    [Fact]
    public async Task The_history_names_who_did_what_and_the_instance_who_started_it()
    {
        using var app = WithKey(Application);
        using var admin = WithKey(Admin);
        using var olga = WithToken(_issuer.Token("olga", ["ops-team"]));
        var appApi = new ApiClient(app);
        await new ApiClient(admin).PublishExampleAsync("signal-roundtrip.json");

        var started = await appApi.StartAsync("signal-roundtrip");
        Assert.Equal("billing-app", started.StartedBy);
        await appApi.SignalAsync(started.Id, "go", new { value = "paid" });
        await appApi.WaitForAsync(started.Id, InstanceStatus.Completed);
        var history = await appApi.HistoryAsync(started.Id);
        Assert.Equal("billing-app", history.Single(h => h.Type == "InstanceStarted").Actor);
        Assert.Equal("billing-app", history.Single(h => h.Type == "SignalReceived").Actor);

        var cancelled = await appApi.StartAsync("signal-roundtrip");
        Assert.Equal(HttpStatusCode.OK, (await olga.PostAsJsonAsync($"/instances/{cancelled.Id}/cancel", new { reason = "duplicate" })).StatusCode);
        var afterCancel = await appApi.HistoryAsync(cancelled.Id);
        Assert.Equal("olga", afterCancel.Single(h => h.Type == "InstanceCancelled").Actor);
        Assert.Equal("billing-app", afterCancel.Single(h => h.Type == "InstanceStarted").Actor);
    }

    [Fact]
    public async Task The_api_description_declares_both_schemes_and_each_operation_its_requirement()
    {
        var document = JsonNode.Parse(await Factory.CreateClient().GetStringAsync("/openapi/v1.json"))!;
        var schemes = document["components"]!["securitySchemes"]!;
        Assert.Equal("bearer", (string?)schemes["Bearer"]!["scheme"]);
        Assert.Equal("X-Api-Key", (string?)schemes["ApiKey"]!["name"]);
        Assert.Equal("header", (string?)schemes["ApiKey"]!["in"]);

        var start = document["paths"]!["/instances"]!["post"]!;
        var requirements = start["security"]!.AsArray().SelectMany(r => r!.AsObject().Select(p => p.Key)).Order();
        Assert.Equal(["ApiKey", "Bearer"], requirements);
        Assert.NotNull(start["responses"]!["401"]);
        Assert.NotNull(start["responses"]!["403"]);
        Assert.Null(document["paths"]!["/health/ready"]?["get"]?["security"]);

        // Scalar, the reference page for people, offers both schemes for pasting a token or a key.
        var page = await Factory.CreateClient().GetStringAsync("/scalar/v1");
        Assert.Contains("\"preferredSecurityScheme\":[\"Bearer\",\"ApiKey\"]", page, StringComparison.Ordinal);
    }

    private static async Task<TaskView> WaitForOpenTaskAsync(HttpClient client, Guid instanceId, string stepId)
    {
        TaskView? task = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            task = (await InboxAsync(client, $"instanceId={instanceId}&status=Open")).SingleOrDefault(t => t.StepId == stepId);
            return task is not null;
        });
        return task!;
    }

    private static async Task<IReadOnlyList<TaskView>> InboxAsync(HttpClient client, string query) =>
        (await client.GetFromJsonAsync<PageView<TaskView>>($"/tasks?{query}", WorkflowServiceFactory.Json))!.Items;
}

public sealed class SqliteAccessControlTests : AccessControlTests<SqliteBackend>;

public sealed class PostgresAccessControlTests : AccessControlTests<PostgresBackend>;

public sealed class MongoDbAccessControlTests : AccessControlTests<MongoDbBackend>;
