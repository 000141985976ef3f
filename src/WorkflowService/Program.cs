using Microsoft.Extensions.Options;
using WorkflowService.Hosting;

try
{
    // The configuration ships beside the binary (the repository's appsettings.json is copied there), so the service reads
    // the same settings however it is started: dotnet run, the published folder, or the container.
    var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });
    builder.AddWorkflowService();

    var app = builder.Build();
    app.MapWorkflowService();
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

/// <summary>The entry point, visible to the test host.</summary>
public partial class Program;
