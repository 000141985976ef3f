using System.Globalization;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.Hosting;

/// <summary>
/// Where the service listens comes from the standard ASP.NET Core settings only (ASPNETCORE_URLS or --urls,
/// ASPNETCORE_HTTP_PORTS); they are checked before the start, so that a wrong one is told in one line like any setting
/// rather than by the server's exception when it binds.
/// </summary>
internal static class ListenAddresses
{
    /// <summary>The host setting of ASPNETCORE_URLS, DOTNET_URLS and --urls.</summary>
    private const string UrlsKey = "urls";

    /// <summary>The host setting of ASPNETCORE_HTTP_PORTS.</summary>
    private const string HttpPortsKey = "http_ports";

    public static void Check(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        foreach (var url in Entries(configuration[UrlsKey]))
        {
            if (!IsListenUrl(url))
            {
                throw ConfigurationChoice.Invalid(UrlsKey, $"ASPNETCORE_URLS (or --urls) '{url}' is not an address to listen on; expected "
                    + "scheme://host:port with a port from 0 to 65535, several separated by ';', such as http://+:8080.");
            }
        }

        foreach (var port in Entries(configuration[HttpPortsKey]))
        {
            if (!int.TryParse(port, NumberStyles.None, CultureInfo.InvariantCulture, out var number) || number > 65535)
            {
                throw ConfigurationChoice.Invalid(HttpPortsKey, $"ASPNETCORE_HTTP_PORTS '{port}' is not a port; expected a number from 0 "
                    + "to 65535, several separated by ';', such as 8080.");
            }
        }
    }

    private static string[] Entries(string? list) =>
        (list ?? string.Empty).Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static bool IsListenUrl(string url)
    {
        try
        {
            var address = BindingAddress.Parse(url);
            return address.IsNamedPipe || address.IsUnixPipe || address.Port is >= 0 and <= 65535;
        }
        catch (FormatException)
        {
            return false;
        }
    }
}
