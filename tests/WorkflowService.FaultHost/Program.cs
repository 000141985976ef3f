using WorkflowService.FaultHost;
using WorkflowService.Hosting;

// The service exactly as it starts in production, plus the store decorator of the fault table's row 5 and an endpoint
// that says how many faults it injected.
return ServiceHost.Run(args, builder => builder.AddStoreFaults(), app => app.MapStoreFaults());
