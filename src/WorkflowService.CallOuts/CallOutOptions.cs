using System.ComponentModel.DataAnnotations;
using System.Net;
using Microsoft.Extensions.Options;

namespace WorkflowService.CallOuts;

/// <summary>
/// Where http steps may call and how much they may read back ("CallOuts" section). A call must pass every rule: its host
/// name, its port, and each address it connects to (checked after name resolution, so DNS cannot point past them).
/// </summary>
public sealed class CallOutOptions
{
    public const string Section = "CallOuts";

    /// <summary>The ports a call may use when <see cref="AllowedPorts"/> is empty (outside Development).</summary>
    public static readonly IReadOnlyList<int> DefaultPorts = [80, 443];

    /// <summary>
    /// Host names http steps may call: exact (case-insensitive, international names in their xn-- form) or
    /// <c>*.example.com</c> for any name under example.com; empty allows any host whose addresses pass the rules below.
    /// </summary>
    public string[] AllowedHosts { get; set; } = [];

    /// <summary>The ports http steps may call; empty allows 80 and 443 (any port in Development).</summary>
    public int[] AllowedPorts { get; set; } = [];

    /// <summary>
    /// Whether calls may reach private (10/8, 172.16/12, 192.168/16, fc00::/7), shared (100.64/10), loopback and link-local
    /// addresses; unset means only in Development. Prefer <see cref="AllowedNetworks"/>, which opens only what is named.
    /// </summary>
    public bool? AllowPrivateNetworks { get; set; }

    /// <summary>Networks in CIDR notation (10.20.0.0/16, fd00:1::/64) calls may reach whatever their kind.</summary>
    public string[] AllowedNetworks { get; set; } = [];

    /// <summary>Redirects a call follows, each hop checked like the first (default 0: a redirect is the call's answer).</summary>
    [Range(0, 10)]
    public int MaxRedirects { get; set; }

    /// <summary>The longest one call may take with all its attempts and the pauses between them (default 10 minutes).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan MaxCallDuration { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>Largest response body read back into the instance, in bytes (default 256 KiB).</summary>
    [Range(1, 16 * 1024 * 1024)]
    public int MaxResponseBytes { get; set; } = 256 * 1024;

    /// <summary>What is wrong with the lists of this section, each naming its key; empty when nothing is.</summary>
    public IEnumerable<string> Problems()
    {
        for (var i = 0; i < AllowedHosts.Length; i++)
        {
            var host = AllowedHosts[i] ?? string.Empty;
            var wildcard = host.StartsWith("*.", StringComparison.Ordinal);
            var kind = Uri.CheckHostName(wildcard ? host[2..] : host);
            if (!System.Text.Ascii.IsValid(host) || !(kind is UriHostNameType.Dns || (!wildcard && kind is UriHostNameType.IPv4 or UriHostNameType.IPv6)))
            {
                yield return $"{Section}:AllowedHosts:{i} '{host}' is not a host name; expected a name such as api.example.com, "
                    + "*.example.com for the names under it, or an IP address.";
            }
        }

        for (var i = 0; i < AllowedPorts.Length; i++)
        {
            if (AllowedPorts[i] is < 1 or > 65535)
            {
                yield return $"{Section}:AllowedPorts:{i} must be a port between 1 and 65535 (it is {AllowedPorts[i]}).";
            }
        }

        for (var i = 0; i < AllowedNetworks.Length; i++)
        {
            if (!IsNetwork(AllowedNetworks[i] ?? string.Empty))
            {
                yield return $"{Section}:AllowedNetworks:{i} '{AllowedNetworks[i]}' is not a network in CIDR notation; expected an address "
                    + "and a prefix length with no bits set past it, such as 10.20.0.0/16 or fd00:1::/64.";
            }
        }
    }

    // IPNetwork.Parse clears bits past the prefix; a value with some set (10.0.0.1/8) is more likely a mistake than meant.
    private static bool IsNetwork(string text) =>
        text.IndexOf('/', StringComparison.Ordinal) is > 0 and var slash && IPNetwork.TryParse(text, out var network)
        && IPAddress.TryParse(text.AsSpan(0, slash), out var address) && address.Equals(network.BaseAddress);

    /// <summary>Fails the start with every problem of the lists, each naming its key.</summary>
    internal sealed class Validator : IValidateOptions<CallOutOptions>
    {
        public ValidateOptionsResult Validate(string? name, CallOutOptions options) =>
            options.Problems().ToList() is { Count: > 0 } problems ? ValidateOptionsResult.Fail(problems) : ValidateOptionsResult.Success;
    }
}
