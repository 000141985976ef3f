using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkflowService.Hosting;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// What a start with given settings ends with, for one part of the service's registrations, without starting a host:
/// the options are validated as at start-up and a failure is described as the process would print it.
/// </summary>
public static class StartupCheck
{
    /// <summary>The one line the start ends with (<see cref="StartupFailure"/>), or null when the settings are right.</summary>
    public static string? Message(Dictionary<string, string?> settings, Action<IServiceCollection, IConfiguration> register)
    {
        ArgumentNullException.ThrowIfNull(register);
        try
        {
            var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
            register(services, new ConfigurationBuilder().AddInMemoryCollection(settings).Build());
            using var provider = services.BuildServiceProvider();
            provider.GetRequiredService<IStartupValidator>().Validate();
            return null;
        }
        catch (Exception e) when (StartupFailure.Describe(e) is { } message)
        {
            return message;
        }
    }
}
