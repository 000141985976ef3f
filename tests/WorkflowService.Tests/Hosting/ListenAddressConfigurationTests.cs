using System.Net;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// The service listens where the standard ASP.NET Core settings say (nothing in appsettings.json overrides them), run as
/// the real process: ASPNETCORE_URLS, ASPNETCORE_HTTP_PORTS as containers set it, and --urls on the command line.
/// </summary>
public sealed class ListenAddressConfigurationTests
{
    [Theory]
    [InlineData(ListenAddress.AspNetCoreUrls)]
    [InlineData(ListenAddress.AspNetCoreHttpPorts)]
    [InlineData(ListenAddress.UrlsArgument)]
    public async Task The_service_listens_where_the_standard_setting_says(ListenAddress listen)
    {
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-listen-").FullName, "workflow.db");

        await using var node = await TestServiceProcess.StartAsync("listen", new Dictionary<string, string?> { ["Store:ConnectionString"] = $"Data Source={database}" }, listen);
        using var client = node.CreateClient();
        using var live = await client.GetAsync("/health/live");
        using var ready = await client.GetAsync("/health/ready");

        Assert.Equal(HttpStatusCode.OK, live.StatusCode);
        Assert.Equal(HttpStatusCode.OK, ready.StatusCode);
    }
}
