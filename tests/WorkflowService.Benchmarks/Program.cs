using WorkflowService.FaultRunner;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.RunnerBackends;

// The benchmark program: the load runner's commands (run, compare, readme, interleave) and the fault runner's (faults).
// Each starts the service (the Release build of src/WorkflowService) on fresh databases and drives it over HTTP like a
// real client. Run with --help for the commands and options.
using var interrupted = new CancellationTokenSource();
Console.CancelKeyPress += (_, e) =>
{
    e.Cancel = true;
    interrupted.Cancel();
};

var shared = new SharedCommandOptions();
var root = RunnerCommandLine.Create(shared, options => LoadRuns.RunAsync(options, interrupted.Token));
root.Subcommands.Add(FaultCommand.Create(shared, options => FaultCommand.RunAsync(options, interrupted.Token)));
return await SharedCommandOptions.InvokeAsync(root, args);
