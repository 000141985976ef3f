using WorkflowService.Hosting;

return ServiceHost.Run(args);

/// <summary>The entry point, visible to the test host.</summary>
public partial class Program;
