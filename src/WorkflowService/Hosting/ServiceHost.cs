using Microsoft.Extensions.Options;

namespace WorkflowService.Hosting;

/// <summary>
/// The service's start-up, in one place: the settings beside the binary, every registration, every endpoint, every setting
/// checked before anything starts. A host that composes more around the service (the fault table's test host adds a store
/// decorator) passes its own registrations and endpoints.
/// </summary>
public static class ServiceHost
{
    /// <summary>Runs the service until it is stopped; 0 on a clean stop, 1 with a one-line reason when a setting is wrong.</summary>
    public static int Run(string[] args, Action<WebApplicationBuilder>? register = null, Action<WebApplication>? map = null)
    {
        if (OperatorCommands.IsCommand(args))
        {
            return OperatorCommands.Run(args);
        }

        try
        {
            // The configuration ships beside the binary (the repository's appsettings.json is copied there), so the service
            // reads the same settings however it is started: dotnet run, the published folder, or the container.
            var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });
            builder.AddWorkflowService();
            register?.Invoke(builder);

            var app = builder.Build();
            app.MapWorkflowService();
            map?.Invoke(app);
            // Every setting is checked before anything starts, so that a wrong one ends the process with its message alone.
            app.Services.GetService<IStartupValidator>()?.Validate();
            app.Run();
            return 0;
        }
        catch (Exception e) when (StartupFailure.Describe(e) is { } message)
        {
            Console.Error.WriteLine(message);
            return 1;
        }
    }
}
