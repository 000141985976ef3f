using System.Runtime.InteropServices;
using Rebus.Activation;
using Rebus.Backoff;
using Rebus.Config;
using Rebus.Logging;
using WorkflowService.RebusPeer;
using WorkflowService.Testing.RebusPeer;

// The benchmark's peer: the signal-roundtrip workflow as a Rebus saga on the PostgreSQL transport and saga storage, in a
// process of its own as our service runs in its own. Started by the benchmark runner's peer-rebus scenarios
// (tests/WorkflowService.LoadRunner/Scenarios/PeerRebusScenario.cs), stopped with SIGTERM.
var settings = PeerSettings.Parse(args);

using var stopped = new CancellationTokenSource();
using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
{
    // Stop the bus ourselves (below): its workers finish the messages in hand before the process ends.
    context.Cancel = true;
    stopped.Cancel();
});
using var sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, context =>
{
    context.Cancel = true;
    stopped.Cancel();
});

using var activator = new BuiltinHandlerActivator();
activator.Register((bus, _) => new RoundtripSaga(bus));

var started = Configure.With(activator)
    // Warnings only: Rebus logs every worker's start at Information, and the runner keeps the output in a log file.
    .Logging(l => l.Console(LogLevel.Warn))
    .Transport(t => t.UsePostgreSql(settings.ConnectionString, settings.TransportTable, settings.Queue))
    .Sagas(s => s.StoreInPostgres(settings.ConnectionString, settings.SagaTable, settings.SagaIndexTable))
    .Options(o =>
    {
        o.SetNumberOfWorkers(settings.Workers);
        o.SetMaxParallelism(settings.Parallelism);
        if (settings.Backoff.Count > 0)
        {
            o.SetBackoffTimes(settings.Backoff);
        }
    })
    .Start();

Console.WriteLine($"{PeerSettings.ReadyLine}: pid {Environment.ProcessId}, {settings}");
try
{
    await Task.Delay(Timeout.Infinite, stopped.Token);
}
catch (OperationCanceledException)
{
    // SIGTERM or SIGINT: disposing the activator below stops the bus.
}

Console.WriteLine("rebus-peer stopping");
return 0;
