using System.Buffers.Binary;
using System.Net;

namespace WorkflowService.CallOuts;

/// <summary>
/// Tells where an IP address leads (IANA's special-purpose registries, IPv4 and IPv6). IPv6 forms that carry an IPv4
/// address a gateway or the socket layer would reach (IPv4-mapped ::ffff:a.b.c.d, 6to4 2002::/16, NAT64 64:ff9b::/96)
/// take the scope of that IPv4 address; the deprecated IPv4-compatible and Teredo forms are special-use.
/// </summary>
public static class AddressScopes
{
    private static readonly (uint Network, int Prefix, AddressScope Scope)[] IPv4Ranges =
    [
        (V4(0, 0, 0, 0), 8, AddressScope.Unspecified),
        (V4(10, 0, 0, 0), 8, AddressScope.Private),
        (V4(100, 64, 0, 0), 10, AddressScope.Shared),
        (V4(127, 0, 0, 0), 8, AddressScope.Loopback),
        (V4(169, 254, 0, 0), 16, AddressScope.LinkLocal),
        (V4(172, 16, 0, 0), 12, AddressScope.Private),
        (V4(192, 0, 0, 0), 24, AddressScope.SpecialUse), // IETF protocol assignments
        (V4(192, 0, 2, 0), 24, AddressScope.SpecialUse), // documentation (TEST-NET-1)
        (V4(192, 88, 99, 0), 24, AddressScope.SpecialUse), // the former 6to4 relay anycast
        (V4(192, 168, 0, 0), 16, AddressScope.Private),
        (V4(198, 18, 0, 0), 15, AddressScope.SpecialUse), // benchmarking
        (V4(198, 51, 100, 0), 24, AddressScope.SpecialUse), // documentation (TEST-NET-2)
        (V4(203, 0, 113, 0), 24, AddressScope.SpecialUse), // documentation (TEST-NET-3)
        (V4(224, 0, 0, 0), 4, AddressScope.Multicast),
        (V4(255, 255, 255, 255), 32, AddressScope.Broadcast),
        (V4(240, 0, 0, 0), 4, AddressScope.SpecialUse), // future use
    ];

    /// <summary>The scope of <paramref name="address"/>; its IPv6 scope id (fe80::1%eth0) plays no part.</summary>
    public static AddressScope Of(IPAddress address)
    {
        ArgumentNullException.ThrowIfNull(address);
        Span<byte> bytes = stackalloc byte[16];
        return address.TryWriteBytes(bytes, out var written) && written == 4
            ? OfIPv4(BinaryPrimitives.ReadUInt32BigEndian(bytes))
            : OfIPv6(BinaryPrimitives.ReadUInt64BigEndian(bytes), BinaryPrimitives.ReadUInt64BigEndian(bytes[8..]));
    }

    /// <summary>The IPv4 address behind an IPv4-mapped IPv6 one, else <paramref name="address"/> itself: the form networks are matched in.</summary>
    public static IPAddress Unmapped(IPAddress address)
    {
        ArgumentNullException.ThrowIfNull(address);
        return address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
    }

    private static AddressScope OfIPv4(uint address)
    {
        foreach (var (network, prefix, scope) in IPv4Ranges)
        {
            if (address >> (32 - prefix) == network >> (32 - prefix))
            {
                return scope;
            }
        }

        return AddressScope.Public;
    }

    private static AddressScope OfIPv6(ulong high, ulong low) => high switch
    {
        0 => low switch
        {
            0 => AddressScope.Unspecified,
            1 => AddressScope.Loopback,
            _ when low >> 32 == 0xffff => OfIPv4((uint)low), // ::ffff:a.b.c.d, IPv4-mapped
            _ => AddressScope.SpecialUse, // IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d and the rest of ::/64
        },
        0x0064_ff9b_0000_0000 when low >> 32 == 0 => OfIPv4((uint)low), // NAT64's well-known prefix: the gateway calls the IPv4 address
        _ when high >> 16 == 0x0064_ff9b_0001 => AddressScope.Private, // local-use NAT64 (RFC 8215)
        0x0100_0000_0000_0000 => AddressScope.SpecialUse, // discard-only 100::/64
        _ when high >> 32 == 0x2001_0db8 => AddressScope.SpecialUse, // documentation
        _ when high >> 41 == 0x2001_0000_0000_0000 >> 41 => AddressScope.SpecialUse, // IETF protocol assignments 2001::/23, Teredo among them
        _ when high >> 48 == 0x2002 => OfIPv4((uint)(high >> 16)), // 6to4: the relay calls the IPv4 address in bits 16 to 48
        _ when high >> 44 == 0x3fff0 => AddressScope.SpecialUse, // documentation 3fff::/20
        _ when high >> 61 == 1 => AddressScope.Public, // global unicast 2000::/3
        _ when high >> 57 == 0xfc >> 1 => AddressScope.Private, // unique local fc00::/7
        _ when high >> 54 == 0xfe80 >> 6 => AddressScope.LinkLocal,
        _ when high >> 54 == 0xfec0 >> 6 => AddressScope.Private, // site-local, deprecated
        _ when high >> 56 == 0xff => AddressScope.Multicast,
        _ => AddressScope.SpecialUse, // not allocated for unicast
    };

    private static uint V4(byte a, byte b, byte c, byte d) => (uint)(a << 24 | b << 16 | c << 8 | d);
}
