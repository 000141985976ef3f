using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkflowService.Hosting;

namespace WorkflowService.Tests.Hosting;

public sealed class CachedLoggerFactoryTests
{
    [Fact]
    public void The_service_hands_out_one_logger_per_category_and_still_writes_through_serilog()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Serilog:MinimumLevel:Default"] = "Information",
        }).Build();
        var services = new ServiceCollection().AddWorkflowLogging(configuration);
        using var provider = services.BuildServiceProvider();
        var factory = provider.GetRequiredService<ILoggerFactory>();

        var first = factory.CreateLogger("WorkflowService.Security.ApiKeyHandler");
        Assert.Same(first, factory.CreateLogger("WorkflowService.Security.ApiKeyHandler"));
        Assert.NotSame(first, factory.CreateLogger("WorkflowService.Api.InstanceEndpoints"));
        // Serilog's logger underneath: its levels, not a default's.
        Assert.True(first.IsEnabled(LogLevel.Information));
        Assert.False(first.IsEnabled(LogLevel.Debug));
    }
}
