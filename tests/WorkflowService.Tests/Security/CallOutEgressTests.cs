using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Security;

/// <summary>
/// Server-side request forgery (issue 36): http steps under the egress policy as it holds outside Development, configured
/// here through the real pipeline (tests run in Development, which allows private networks and any port). Listeners on
/// every local address count connections, so each refused call is shown to have made none. The only network the service
/// may reach here is 127.0.0.2/32, where an allowed target answers, redirects and drips.
/// </summary>
public sealed class CallOutEgressTests(CallOutEgressTests.Targets targets) : SharedServiceTest<SqliteBackend>, IClassFixture<CallOutEgressTests.Targets>
{
    private const string EgressKey = "k3y-only-for-the-first-host";

    private const string PrivateRule = "addresses are not allowed (CallOuts:AllowPrivateNetworks / CallOuts:AllowedNetworks)";

    protected override Dictionary<string, string?> Settings => new()
    {
        ["CallOuts:AllowPrivateNetworks"] = "false",
        ["CallOuts:AllowedNetworks:0"] = "127.0.0.2/32",
        ["CallOuts:AllowedPorts:0"] = $"{targets.Listening.Port}",
        ["CallOuts:AllowedPorts:1"] = $"{targets.Allowed.Address.Port}",
        ["CallOuts:AllowedPorts:2"] = $"{targets.Elsewhere.Address.Port}",
        ["CallOuts:Secrets:egress-key"] = EgressKey,
        ["CallOuts:MaxRedirects"] = "3",
        // A refused call fails its run at once; one signal worker, so a call that held it would hold the node.
        ["Engine:MaxAttempts"] = "1",
        ["Workers:SignalWorkers"] = "1",
    };

    [Theory]
    [InlineData("127.0.0.1", "calls to 127.0.0.1 are refused: loopback " + PrivateRule)]
    [InlineData("[::1]", "calls to ::1 are refused: loopback " + PrivateRule)]
    [InlineData("[::ffff:127.0.0.1]", "calls to ::ffff:127.0.0.1 are refused: loopback " + PrivateRule)]
    [InlineData("[2002:7f00:1::]", "calls to 2002:7f00:1:: are refused: loopback " + PrivateRule)] // 6to4 around 127.0.0.1
    [InlineData("169.254.169.254", "calls to 169.254.169.254 are refused: link-local " + PrivateRule)]
    [InlineData("10.1.2.3", "calls to 10.1.2.3 are refused: private " + PrivateRule)]
    [InlineData("100.64.0.1", "calls to 100.64.0.1 are refused: shared (carrier-grade NAT) " + PrivateRule)]
    [InlineData("0.0.0.0", "calls to 0.0.0.0 are refused: unspecified addresses are not allowed (CallOuts:AllowedNetworks)")]
    [InlineData("localhost", "calls to localhost are refused: loopback " + PrivateRule)]
    public async Task A_call_to_an_address_inside_is_refused_with_its_rule_and_connects_nowhere(string host, string reason)
    {
        var faulted = await CallAsync($"http://{host}:{targets.Listening.Port}/latest/meta-data/", InstanceStatus.Faulted);

        Assert.Equal($"step 'call': {reason}", faulted.Error);
        Assert.Equal(0, targets.Listening.Accepted);
    }

    [Fact]
    public async Task A_call_to_a_port_not_allowed_is_refused_before_it_connects()
    {
        await using var unlisted = new ConnectionCounter();

        var faulted = await CallAsync($"http://127.0.0.2:{unlisted.Port}/", InstanceStatus.Faulted);

        Assert.Equal($"step 'call': calls to 127.0.0.2 on port {unlisted.Port} are refused: the port is not allowed (CallOuts:AllowedPorts)",
            faulted.Error);
        Assert.Equal(0, unlisted.Accepted);
    }

    [Fact]
    public async Task An_allowed_host_that_redirects_inside_has_the_hop_refused_by_the_same_rule()
    {
        var calls = targets.Allowed.RedirectCalls;

        var faulted = await CallAsync(
            $"{targets.Allowed.Address}redirect?to={Uri.EscapeDataString($"http://127.0.0.1:{targets.Listening.Port}/")}", InstanceStatus.Faulted);

        Assert.Equal($"step 'call': calls to 127.0.0.1 are refused: loopback {PrivateRule}", faulted.Error);
        Assert.Equal(calls + 1, targets.Allowed.RedirectCalls);
        Assert.Equal(0, targets.Listening.Accepted);
    }

    [Fact]
    public async Task By_default_a_redirect_is_the_calls_answer_and_is_not_followed()
    {
        var settings = Settings;
        settings.Remove("CallOuts:MaxRedirects");
        var (_, api) = await StartServiceAsync(settings);
        var location = $"http://127.0.0.2:{targets.Listening.Port}/";

        var faulted = await CallAsync($"{targets.Allowed.Address}redirect?to={Uri.EscapeDataString(location)}", InstanceStatus.Faulted, api);

        Assert.Equal($"step 'call': GET {targets.Allowed.Address}redirect answered 302 Found", faulted.Error);
        Assert.Equal(0, targets.Listening.Accepted);
    }

    [Fact]
    public async Task A_redirect_to_another_origin_carries_none_of_the_steps_headers_and_a_post_goes_on_as_a_get()
    {
        const string headers = "{ \"X-Api-Key\": \"secret('egress-key')\" }";
        var sameOrigin = $"{targets.Allowed.Address}headers";
        var elsewhere = $"{targets.Elsewhere.Address}headers";

        var kept = await CallAsync($"{targets.Allowed.Address}redirect?to={Uri.EscapeDataString(sameOrigin)}", InstanceStatus.Completed, headers: headers);
        var dropped = await CallAsync($"{targets.Allowed.Address}redirect?to={Uri.EscapeDataString(elsewhere)}", InstanceStatus.Completed, headers: headers);

        Assert.Equal(EgressKey, kept.Output!.Value.GetProperty("body").GetProperty("apiKey").GetString());
        Assert.Equal(System.Text.Json.JsonValueKind.Null, dropped.Output!.Value.GetProperty("body").GetProperty("apiKey").ValueKind);
        Assert.Equal("GET", dropped.Output!.Value.GetProperty("body").GetProperty("method").GetString());
    }

    [Fact]
    public async Task A_call_to_an_allowed_network_and_port_is_made()
    {
        var done = await CallAsync($"{targets.Allowed.Address}quote", InstanceStatus.Completed);

        Assert.Equal(200, done.Output!.Value.GetProperty("status").GetInt32());
    }

    [Fact]
    public async Task A_server_that_drips_its_body_fails_the_attempt_at_its_deadline_and_frees_the_worker()
    {
        var faulted = await CallAsync($"{targets.Allowed.Address}drip", InstanceStatus.Faulted, timeout: "PT2S");

        Assert.Equal($"step 'call': the call to 127.0.0.2:{targets.Allowed.Address.Port} did not finish within the step's timeout (2000 ms)",
            faulted.Error);
        // The node's only signal worker is free again: the next call-out is made and its instance completes.
        var next = await CallAsync($"{targets.Allowed.Address}quote", InstanceStatus.Completed);
        Assert.Equal(200, next.Output!.Value.GetProperty("status").GetInt32());
    }

    [Fact]
    public async Task A_call_that_outlasts_CallOuts_MaxCallDuration_fails_though_its_step_allows_longer()
    {
        var settings = Settings;
        settings["CallOuts:MaxCallDuration"] = "00:00:01";
        var (_, api) = await StartServiceAsync(settings);

        var faulted = await CallAsync($"{targets.Allowed.Address}drip", InstanceStatus.Faulted, api, timeout: "PT30S");

        Assert.Equal($"step 'call': the call to 127.0.0.2:{targets.Allowed.Address.Port} took longer than 00:00:01 with its retries (CallOuts:MaxCallDuration)",
            faulted.Error);
    }

    /// <summary>Runs a definition whose one http step calls <paramref name="url"/> without retries, until the instance has <paramref name="status"/>.</summary>
    private async Task<InstanceView> CallAsync(string url, InstanceStatus status, ApiClient? api = null, string timeout = "PT5S", string? headers = null)
    {
        api ??= Api;
        var name = Definitions.Unique("egress");
        // The quote service takes a POST with a body; every other path a GET.
        var request = url.EndsWith("/quote", StringComparison.Ordinal) ? "\"method\": \"POST\", \"body\": \"({ sum: 100 })\"" : "\"method\": \"GET\"";
        if (headers is not null)
        {
            // With headers: a POST, which a 302 turns into a GET.
            request = $"\"method\": \"POST\", \"body\": \"({{ n: 1 }})\", \"headers\": {headers}";
        }

        await api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "call", "type": "http", {{request}}, "url": "'{{url}}'", "timeout": "{{timeout}}", "retries": 0, "output": "reply" },
                { "id": "done", "type": "complete", "result": "vars.reply" }
              ]
            }
            """);
        var instance = await api.StartAsync(name);
        return await api.WaitForAsync(instance.Id, status, TimeSpan.FromSeconds(60));
    }

    /// <summary>
    /// The listener no call may reach, and two allowed targets on 127.0.0.2 (two origins: two ports), shared by the tests
    /// of the class.
    /// </summary>
    public sealed class Targets : IAsyncLifetime
    {
        public ConnectionCounter Listening { get; } = new();

        public CallOutTarget Allowed { get; private set; } = null!;

        public CallOutTarget Elsewhere { get; private set; } = null!;

        public async ValueTask InitializeAsync()
        {
            Allowed = await CallOutTarget.StartAsync("127.0.0.2");
            Elsewhere = await CallOutTarget.StartAsync("127.0.0.2");
        }

        public async ValueTask DisposeAsync()
        {
            await Listening.DisposeAsync();
            await Allowed.DisposeAsync();
            await Elsewhere.DisposeAsync();
        }
    }
}
