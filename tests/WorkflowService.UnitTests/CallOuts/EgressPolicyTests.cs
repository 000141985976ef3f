using System.Net;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using WorkflowService.CallOuts;

namespace WorkflowService.UnitTests.CallOuts;

/// <summary>The rules of CallOuts: defaults per environment, allowed hosts with wildcards, ports, and networks opened by name.</summary>
public sealed class EgressPolicyTests
{
    private static EgressPolicy Policy(CallOutOptions? options = null, string environment = "Production") =>
        new(Options.Create(options ?? new CallOutOptions()), new NamedEnvironment(environment), NullLogger<EgressPolicy>.Instance);

    /// <summary>A host environment by its name, all the policy reads of it (no host is built).</summary>
    private sealed class NamedEnvironment(string name) : IHostEnvironment
    {
        public string EnvironmentName { get; set; } = name;
        public string ApplicationName { get; set; } = "WorkflowService";
        public string ContentRootPath { get; set; } = AppContext.BaseDirectory;
        public IFileProvider ContentRootFileProvider { get; set; } = new NullFileProvider();
    }

    [Fact]
    public void Outside_development_only_public_addresses_on_ports_80_and_443_are_allowed()
    {
        var policy = Policy();

        Assert.Null(policy.RefusalOf("api.example.com", 443));
        Assert.Null(policy.RefusalOf("api.example.com", 80));
        Assert.Equal("calls to api.example.com on port 8080 are refused: the port is not allowed (CallOuts:AllowedPorts)",
            policy.RefusalOf("api.example.com", 8080));
        Assert.Null(policy.RuleAgainst(IPAddress.Parse("93.184.215.14")));
        Assert.Equal("loopback addresses are not allowed (CallOuts:AllowPrivateNetworks / CallOuts:AllowedNetworks)",
            policy.RuleAgainst(IPAddress.Parse("127.0.0.1")));
        Assert.Equal("special-use (reserved) addresses are not allowed (CallOuts:AllowedNetworks)",
            policy.RuleAgainst(IPAddress.Parse("192.0.2.1")));
    }

    [Fact]
    public void Development_allows_private_networks_and_any_port_unless_configured()
    {
        var open = Policy(environment: Environments.Development);
        Assert.Null(open.RefusalOf("localhost", 5173));
        Assert.Null(open.RuleAgainst(IPAddress.Loopback));
        Assert.Null(open.RuleAgainst(IPAddress.Parse("10.0.0.5")));
        // Multicast, unspecified and special-use stay closed: they are not networks a developer runs services on.
        Assert.NotNull(open.RuleAgainst(IPAddress.Any));

        var secure = Policy(new CallOutOptions { AllowPrivateNetworks = false, AllowedPorts = [443] }, Environments.Development);
        Assert.NotNull(secure.RefusalOf("localhost", 5173));
        Assert.NotNull(secure.RuleAgainst(IPAddress.Loopback));
    }

    [Fact]
    public void Allowed_networks_open_only_the_named_ranges_in_either_address_form()
    {
        var policy = Policy(new CallOutOptions { AllowedNetworks = ["10.20.0.0/16", "fd00:1::/64", "0.0.0.0/32"] });

        Assert.Null(policy.RuleAgainst(IPAddress.Parse("10.20.3.4")));
        Assert.Null(policy.RuleAgainst(IPAddress.Parse("::ffff:10.20.3.4")));
        Assert.Null(policy.RuleAgainst(IPAddress.Parse("fd00:1::7")));
        Assert.Null(policy.RuleAgainst(IPAddress.Any));
        Assert.NotNull(policy.RuleAgainst(IPAddress.Parse("10.21.0.1")));
        Assert.NotNull(policy.RuleAgainst(IPAddress.Parse("fd00:2::7")));
    }

    [Fact]
    public void Allowed_hosts_match_exactly_or_under_a_wildcard_in_any_case()
    {
        var policy = Policy(new CallOutOptions { AllowedHosts = ["quotes.example.com", "*.rates.example.org", "192.0.2.10"] });

        Assert.Null(policy.RefusalOf("Quotes.Example.COM", 443));
        Assert.Null(policy.RefusalOf("quotes.example.com.", 443));
        Assert.Null(policy.RefusalOf("eu.rates.example.org", 443));
        Assert.Null(policy.RefusalOf("a.eu.rates.example.org", 443));
        Assert.Null(policy.RefusalOf("192.0.2.10", 443));
        Assert.Equal("calls to rates.example.org are refused: the host is not in CallOuts:AllowedHosts", policy.RefusalOf("rates.example.org", 443));
        Assert.NotNull(policy.RefusalOf("evilrates.example.org", 443));
        Assert.NotNull(policy.RefusalOf("quotes.example.com.evil.net", 443));
    }

    [Fact]
    public void Wrong_lists_are_told_with_their_keys()
    {
        var options = new CallOutOptions
        {
            AllowedHosts = ["ok.example.com", "*", "http://x.example.com", "*.10.0.0.1"],
            AllowedPorts = [443, 0],
            AllowedNetworks = ["10.0.0.0/8", "10.0.0.1/8", "10.0.0.1"],
        };

        Assert.Equal(
        [
            "CallOuts:AllowedHosts:1 '*' is not a host name; expected a name such as api.example.com, *.example.com for the names under it, or an IP address.",
            "CallOuts:AllowedHosts:2 'http://x.example.com' is not a host name; expected a name such as api.example.com, *.example.com for the names under it, or an IP address.",
            "CallOuts:AllowedHosts:3 '*.10.0.0.1' is not a host name; expected a name such as api.example.com, *.example.com for the names under it, or an IP address.",
            "CallOuts:AllowedPorts:1 must be a port between 1 and 65535 (it is 0).",
            "CallOuts:AllowedNetworks:1 '10.0.0.1/8' is not a network in CIDR notation; expected an address and a prefix length with no bits set past it, such as 10.20.0.0/16 or fd00:1::/64.",
            "CallOuts:AllowedNetworks:2 '10.0.0.1' is not a network in CIDR notation; expected an address and a prefix length with no bits set past it, such as 10.20.0.0/16 or fd00:1::/64.",
        ], options.Problems());
    }
}
