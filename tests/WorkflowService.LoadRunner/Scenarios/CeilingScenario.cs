using System.Diagnostics;
using WorkflowService.RunnerBackends;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The physical ceiling on this machine: the database transactions the engine issues per signal-roundtrip workflow
/// (<see cref="CeilingSession"/>), issued by a minimal loop of <see cref="Scenario.Concurrency"/> tasks against the
/// run's database — no engine, no HTTP, the service stopped. Each task starts an instance, inserts its signal, claims
/// one due signal (any instance's, as a worker would) and completes that signal's instance.
/// </summary>
internal sealed class CeilingScenario : Scenario
{
    public const string SignalInsert = "signalInsert";
    public const string Claim = "claim";
    public const string Completion = "completion";

    /// <summary>The connections the loop shares: the service's default pool (Store:MaxPoolSize 20), so that both run under the same bound.</summary>
    public const int Connections = 20;

    public override bool NeedsService => false;

    public override int WarmUpOps => Math.Min(Concurrency, 64);

    public override async Task WarmUpAsync(ScenarioContext context)
    {
        await using var session = await context.Backend.OpenCeilingAsync(Connections, groupCommit: false, context.Cancellation);
        await RunAsync(context, session, WarmUpOps, Math.Min(Concurrency, 16), record: false);
    }

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        await using var session = await context.Backend.OpenCeilingAsync(Connections, groupCommit: false, context.Cancellation);
        var clock = Stopwatch.StartNew();
        var (samples, misses) = await RunAsync(context, session, Ops, Concurrency, record: true);
        var measurement = new Measurement(samples, clock.Elapsed);
        measurement.Figures["claim misses"] = misses;
        measurement.Notes.Add($"{Concurrency} tasks sharing a pool of {Connections} connections (the service's default Store:MaxPoolSize; SQLite: one writer at a time, as the store); a claim that found every due signal taken by other tasks ({misses} times) was completed later by a drain pass inside the measured time");
        return measurement;
    }

    private static async Task<(OperationSample[] Samples, int Misses)> RunAsync(
        ScenarioContext context, CeilingSession session, int ops, int concurrency, bool record)
    {
        var ct = context.Cancellation;
        var samples = new OperationSample[ops];
        var next = -1;
        var misses = 0;
        var owner = $"ceiling-{Environment.ProcessId}";
        await Task.WhenAll(Enumerable.Range(0, concurrency).Select(_ => Task.Run(async () =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < ops)
            {
                var clock = new PhaseClock();
                try
                {
                    var instanceId = Guid.CreateVersion7();
                    await session.StartAsync(instanceId, ct);
                    clock.Lap(Phases.Start);
                    await session.EnqueueAsync(Guid.CreateVersion7(), instanceId, ct);
                    clock.Lap(SignalInsert);
                    var claimed = await session.ClaimAsync(owner, ct);
                    clock.Lap(Claim);
                    if (claimed is null)
                    {
                        Interlocked.Increment(ref misses);
                    }
                    else
                    {
                        await session.CompleteAsync(claimed, ct);
                        clock.Lap(Completion);
                    }

                    samples[i] = clock.Finish();
                }
                catch (Exception e) when (e is not OperationCanceledException || !ct.IsCancellationRequested)
                {
                    samples[i] = OperationSample.Failed(clock.ElapsedMs, e);
                }

                if (record)
                {
                    context.Progress.Record(samples[i].Ok);
                }
            }
        })));

        // Signals left by claims that came back empty: complete them as the workers' next passes would.
        while (await session.ClaimAsync(owner, ct) is { } left)
        {
            await session.CompleteAsync(left, ct);
        }

        return (samples, misses);
    }
}
