using System.Net;
using System.Net.Sockets;
using System.Runtime.ExceptionServices;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;

namespace WorkflowService.CallOuts;

/// <summary>
/// Where call-outs may go (<see cref="CallOutOptions"/>), and the connections they make: every connection (a redirect hop's
/// too) checks its host name and port, resolves the name and connects only to an address that passes. So the address
/// checked is the address connected to, and a DNS answer that changes between a check and the call (rebinding) cannot
/// lead past the rules. A refusal names the rule, never what the network answered.
/// </summary>
public sealed partial class EgressPolicy
{
    private readonly HashSet<string> _hosts = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<string> _hostSuffixes = [];
    private readonly HashSet<int>? _ports;
    private readonly bool _allowPrivate;
    private readonly IPNetwork[] _networks;
    private readonly ILogger<EgressPolicy> _logger;

    public EgressPolicy(IOptions<CallOutOptions> options, IHostEnvironment environment, ILogger<EgressPolicy> logger)
    {
        var settings = options.Value;
        foreach (var host in settings.AllowedHosts)
        {
            if (host.StartsWith("*.", StringComparison.Ordinal))
            {
                _hostSuffixes.Add(host[1..].TrimEnd('.'));
            }
            else
            {
                _hosts.Add(Bare(host));
            }
        }

        // Development calls the services a developer runs on this machine; everywhere else only what is configured.
        var development = environment.IsDevelopment();
        _ports = settings.AllowedPorts.Length > 0 ? [.. settings.AllowedPorts] : development ? null : [.. CallOutOptions.DefaultPorts];
        _allowPrivate = settings.AllowPrivateNetworks ?? development;
        _networks = [.. settings.AllowedNetworks.Select(n => IPNetwork.Parse(n))];
        _logger = logger;
    }

    /// <summary>Why a call to <paramref name="host"/> on <paramref name="port"/> may not be made; null when its addresses decide.</summary>
    public string? RefusalOf(string host, int port)
    {
        host = Bare(host);
        if ((_hosts.Count > 0 || _hostSuffixes.Count > 0) && !_hosts.Contains(host) && !UnderAllowedSuffix(host))
        {
            return Refused(host, port, $"calls to {host} are refused: the host is not in CallOuts:AllowedHosts");
        }

        return _ports is not null && !_ports.Contains(port)
            ? Refused(host, port, $"calls to {host} on port {port} are refused: the port is not allowed (CallOuts:AllowedPorts)")
            : null;
    }

    /// <summary>Which rule keeps calls from <paramref name="address"/>, as "loopback addresses are not allowed (...)"; null when none does.</summary>
    public string? RuleAgainst(IPAddress address)
    {
        var unmapped = AddressScopes.Unmapped(address);
        var scope = AddressScopes.Of(unmapped);
        if (scope == AddressScope.Public || InAllowedNetwork(unmapped) || InAllowedNetwork(address))
        {
            return null;
        }

        return scope switch
        {
            AddressScope.Private or AddressScope.Shared or AddressScope.Loopback or AddressScope.LinkLocal when _allowPrivate => null,
            AddressScope.Private or AddressScope.Shared or AddressScope.Loopback or AddressScope.LinkLocal =>
                $"{Describe(scope)} addresses are not allowed (CallOuts:AllowPrivateNetworks / CallOuts:AllowedNetworks)",
            _ => $"{Describe(scope)} addresses are not allowed (CallOuts:AllowedNetworks)",
        };
    }

    /// <summary>
    /// A handler for a client that calls out under this policy: every connection through <see cref="ConnectAsync"/>, no
    /// proxy (the policy would check the proxy, not the target), no redirects followed by the handler (it would keep
    /// every header but Authorization on a hop to another host: the sender follows them itself), no cookies.
    /// </summary>
    public SocketsHttpHandler CreateHandler() => new()
    {
        ConnectCallback = ConnectAsync,
        UseProxy = false,
        AllowAutoRedirect = false,
        UseCookies = false,
    };

    /// <summary>
    /// The <see cref="SocketsHttpHandler.ConnectCallback"/> of call-outs: checks, resolves, filters, then connects to the
    /// first allowed address that answers. A refusal is thrown as <see cref="CallOutFailedException"/> (the handler wraps
    /// it in its HttpRequestException).
    /// </summary>
    public async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(context);
        var host = Bare(context.DnsEndPoint.Host);
        var port = context.DnsEndPoint.Port;
        if (RefusalOf(host, port) is { } refusal)
        {
            throw new CallOutFailedException(refusal);
        }

        var addresses = IPAddress.TryParse(host, out var literal)
            ? [literal]
            : await Dns.GetHostAddressesAsync(host, cancellationToken).ConfigureAwait(false);
        string? rule = null;
        ExceptionDispatchInfo? failure = null;
        foreach (var address in addresses)
        {
            if (RuleAgainst(address) is { } against)
            {
                rule ??= against;
                LogAddressRefused(_logger, Endpoint(host, port), address, against);
                continue;
            }

            Socket? socket = new(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                socket.NoDelay = true;
                await socket.ConnectAsync(new IPEndPoint(address, port), cancellationToken).ConfigureAwait(false);
                var stream = new NetworkStream(socket, ownsSocket: true);
                socket = null;
                return stream;
            }
            catch (SocketException e)
            {
                failure = ExceptionDispatchInfo.Capture(e);
            }
            finally
            {
                socket?.Dispose();
            }
        }

        failure?.Throw();
        throw rule is not null
            ? new CallOutFailedException($"calls to {host} are refused: {rule}")
            : new SocketException((int)SocketError.HostNotFound);
    }

    private bool UnderAllowedSuffix(string host)
    {
        foreach (var suffix in _hostSuffixes)
        {
            if (host.EndsWith(suffix, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    private bool InAllowedNetwork(IPAddress address)
    {
        foreach (var network in _networks)
        {
            if (network.Contains(address))
            {
                return true;
            }
        }

        return false;
    }

    private static string Describe(AddressScope scope) => scope switch
    {
        AddressScope.Shared => "shared (carrier-grade NAT)",
        AddressScope.LinkLocal => "link-local",
        AddressScope.SpecialUse => "special-use (reserved)",
        _ => scope.ToString().ToLowerInvariant(),
    };

    // The form host names are compared in: no IPv6 brackets, no trailing dot of a fully qualified name.
    private static string Bare(string host) => host.TrimStart('[').TrimEnd(']').TrimEnd('.');

    private string Refused(string host, int port, string refusal)
    {
        LogRefused(_logger, Endpoint(host, port), refusal);
        return refusal;
    }

    private static string Endpoint(string host, int port) => host.Contains(':', StringComparison.Ordinal) ? $"[{host}]:{port}" : $"{host}:{port}";

    [LoggerMessage(Level = LogLevel.Warning, Message = "Call-out to {Endpoint} refused: {Reason}")]
    private static partial void LogRefused(ILogger logger, string endpoint, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Call-out to {Endpoint} not connected to {Address}: {Rule}")]
    private static partial void LogAddressRefused(ILogger logger, string endpoint, IPAddress address, string rule);
}
