using System.Net;
using WorkflowService.CallOuts;

namespace WorkflowService.UnitTests.CallOuts;

/// <summary>Where an address leads, IPv4 and IPv6, with the IPv6 forms that carry an IPv4 address classed by that address.</summary>
public sealed class AddressScopesTests
{
    [Theory]
    [InlineData("8.8.8.8", AddressScope.Public)]
    [InlineData("11.0.0.1", AddressScope.Public)]
    [InlineData("0.0.0.0", AddressScope.Unspecified)]
    [InlineData("0.1.2.3", AddressScope.Unspecified)]
    [InlineData("10.0.0.1", AddressScope.Private)]
    [InlineData("10.255.255.255", AddressScope.Private)]
    [InlineData("100.64.0.1", AddressScope.Shared)]
    [InlineData("100.127.255.255", AddressScope.Shared)]
    [InlineData("100.128.0.0", AddressScope.Public)]
    [InlineData("127.0.0.1", AddressScope.Loopback)]
    [InlineData("127.255.255.254", AddressScope.Loopback)]
    [InlineData("169.254.169.254", AddressScope.LinkLocal)]
    [InlineData("172.15.255.255", AddressScope.Public)]
    [InlineData("172.16.0.1", AddressScope.Private)]
    [InlineData("172.31.255.255", AddressScope.Private)]
    [InlineData("172.32.0.1", AddressScope.Public)]
    [InlineData("192.168.1.1", AddressScope.Private)]
    [InlineData("192.0.0.170", AddressScope.SpecialUse)]
    [InlineData("192.0.2.1", AddressScope.SpecialUse)]
    [InlineData("198.18.0.1", AddressScope.SpecialUse)]
    [InlineData("198.19.255.255", AddressScope.SpecialUse)]
    [InlineData("198.51.100.7", AddressScope.SpecialUse)]
    [InlineData("203.0.113.9", AddressScope.SpecialUse)]
    [InlineData("224.0.0.1", AddressScope.Multicast)]
    [InlineData("239.255.255.250", AddressScope.Multicast)]
    [InlineData("240.0.0.1", AddressScope.SpecialUse)]
    [InlineData("255.255.255.255", AddressScope.Broadcast)]
    public void IPv4_addresses_are_classed_by_the_special_purpose_registry(string address, AddressScope scope) =>
        Assert.Equal(scope, AddressScopes.Of(IPAddress.Parse(address)));

    [Theory]
    [InlineData("2606:4700:4700::1111", AddressScope.Public)]
    [InlineData("::", AddressScope.Unspecified)]
    [InlineData("::1", AddressScope.Loopback)]
    [InlineData("fc00::1", AddressScope.Private)]
    [InlineData("fd12:3456::1", AddressScope.Private)]
    [InlineData("fec0::1", AddressScope.Private)]
    [InlineData("fe80::1", AddressScope.LinkLocal)]
    [InlineData("fe80::1%2", AddressScope.LinkLocal)]
    [InlineData("febf::1", AddressScope.LinkLocal)]
    [InlineData("ff02::1", AddressScope.Multicast)]
    [InlineData("2001:db8::1", AddressScope.SpecialUse)]
    [InlineData("3fff::1", AddressScope.SpecialUse)]
    [InlineData("100::1", AddressScope.SpecialUse)]
    [InlineData("4000::1", AddressScope.SpecialUse)]
    [InlineData("2001:0:4136:e378:8000:63bf:3fff:fdd2", AddressScope.SpecialUse)] // Teredo
    public void IPv6_addresses_are_classed_by_the_special_purpose_registry(string address, AddressScope scope) =>
        Assert.Equal(scope, AddressScopes.Of(IPAddress.Parse(address)));

    [Theory]
    [InlineData("::ffff:127.0.0.1", AddressScope.Loopback)] // IPv4-mapped
    [InlineData("::ffff:10.0.0.1", AddressScope.Private)]
    [InlineData("::ffff:169.254.169.254", AddressScope.LinkLocal)]
    [InlineData("::ffff:8.8.8.8", AddressScope.Public)]
    [InlineData("64:ff9b::127.0.0.1", AddressScope.Loopback)] // NAT64, well-known prefix
    [InlineData("64:ff9b::a9fe:a9fe", AddressScope.LinkLocal)]
    [InlineData("64:ff9b::8.8.8.8", AddressScope.Public)]
    [InlineData("64:ff9b:1::a00:1", AddressScope.Private)] // NAT64, local use
    [InlineData("2002:7f00:1::", AddressScope.Loopback)] // 6to4
    [InlineData("2002:a9fe:a9fe::1", AddressScope.LinkLocal)]
    [InlineData("2002:c0a8:101::1", AddressScope.Private)]
    [InlineData("2002:808:808::1", AddressScope.Public)]
    [InlineData("::127.0.0.1", AddressScope.SpecialUse)] // IPv4-compatible, deprecated
    [InlineData("::ffff:0:127.0.0.1", AddressScope.SpecialUse)] // IPv4-translated
    public void IPv6_forms_carrying_an_IPv4_address_take_its_scope_or_are_special_use(string address, AddressScope scope) =>
        Assert.Equal(scope, AddressScopes.Of(IPAddress.Parse(address)));

    [Fact]
    public void A_mapped_address_is_matched_as_its_IPv4_address()
    {
        Assert.Equal(IPAddress.Parse("10.1.2.3"), AddressScopes.Unmapped(IPAddress.Parse("::ffff:10.1.2.3")));
        Assert.Equal(IPAddress.Parse("2002:a01:203::"), AddressScopes.Unmapped(IPAddress.Parse("2002:a01:203::")));
    }
}
