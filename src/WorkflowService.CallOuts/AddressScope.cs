namespace WorkflowService.CallOuts;

/// <summary>Where an IP address leads, as far as call-outs are concerned (<see cref="AddressScopes.Of"/>).</summary>
public enum AddressScope
{
    /// <summary>A globally routed unicast address: the only kind call-outs reach by default outside Development.</summary>
    Public,

    /// <summary>10/8, 172.16/12, 192.168/16, fc00::/7, the deprecated site-local fec0::/10, local-use NAT64 64:ff9b:1::/48.</summary>
    Private,

    /// <summary>100.64/10, carrier-grade NAT: not the public internet.</summary>
    Shared,

    /// <summary>127/8 and ::1: this node.</summary>
    Loopback,

    /// <summary>169.254/16 (where cloud metadata services answer) and fe80::/10.</summary>
    LinkLocal,

    /// <summary>224/4 and ff00::/8.</summary>
    Multicast,

    /// <summary>0/8 and ::, which a connect takes for this node.</summary>
    Unspecified,

    /// <summary>255.255.255.255.</summary>
    Broadcast,

    /// <summary>Reserved ranges: documentation, benchmarking, protocol and future use, and IPv6 outside 2000::/3.</summary>
    SpecialUse,
}
