using WorkflowService.Hosting;

// The configuration ships beside the binary (the repository's appsettings.json is copied there), so the service reads
// the same settings however it is started: dotnet run, the published folder, or the container.
var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });
builder.AddWorkflowService();

var app = builder.Build();
app.MapWorkflowService();
app.Run();

/// <summary>The entry point, visible to the test host.</summary>
public partial class Program;
