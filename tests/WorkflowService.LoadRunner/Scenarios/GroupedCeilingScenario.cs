using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;
using WorkflowService.Engine.Persistence;
using WorkflowService.RunnerBackends;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The ceiling that bounds the engine: the rows the store writes per signal-roundtrip workflow, written as the store writes
/// them (<see cref="CeilingSession"/> with group commit: a few writer connections sharing commits on PostgreSQL, one
/// writer on SQLite) and claimed as the service claims them (one dispatcher claiming as many due signals as it has idle
/// workers, <see cref="Workers"/> workers completing them, an in-process wake-up after each signal insert and a bounded
/// wait otherwise), by a minimal loop with no engine, no JSON (but the history row's more_json, which the store writes
/// too) and no HTTP. <see cref="Scenario.Concurrency"/> clients each start an instance, insert its signal and wait for
/// its completion, as the load does through the API.
/// </summary>
internal sealed class GroupedCeilingScenario : Scenario
{
    /// <summary>The service's default signal workers (Workers:SignalWorkers), as in signal-roundtrip-sustained.</summary>
    public const int Workers = 8;

    /// <summary>The longest the dispatcher sleeps without a wake-up: the service's poll interval (Workers:PollInterval).</summary>
    private static readonly TimeSpan Poll = TimeSpan.FromSeconds(1);

    public override bool NeedsService => false;

    public override int WarmUpOps => Math.Min(Concurrency * 4, 512);

    public override async Task WarmUpAsync(ScenarioContext context)
    {
        await using var session = await context.Backend.OpenCeilingAsync(CeilingScenario.Connections, groupCommit: true, context.Cancellation);
        await RunAsync(context, session, WarmUpOps, record: false);
    }

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        await using var session = await context.Backend.OpenCeilingAsync(CeilingScenario.Connections, groupCommit: true, context.Cancellation);
        var clock = Stopwatch.StartNew();
        var (samples, claims) = await RunAsync(context, session, Ops, record: true);
        var measurement = new Measurement(samples, clock.Elapsed);
        measurement.Figures["claims"] = claims.Count;
        measurement.Figures["signals per claim"] = claims.Count == 0 ? 0 : Math.Round(claims.Average(), 2);
        measurement.Notes.Add($"{Concurrency} clients (start, signal insert, then wait for the completion); one dispatcher claiming up to its idle workers' count, {Workers} workers completing; {WritesAndClaims(context.Backend.Name)}");
        return measurement;
    }

    /// <summary>How the backend's store writes and claims, which the grouped ceiling does as it does.</summary>
    private static string WritesAndClaims(string backend) => backend switch
    {
        "sqlite" => "writes through the store's group commit (one writer), claims on the writer, the instances read after",
        "mongodb" => "writes as the store's own calls, wait points through its group commit (one transaction per group), claims one findOneAndUpdate per signal, the instances read after",
        _ => "writes through the store's group commit (4 writer connections, up to 32 writes a commit), claims on the store's claim connections, the instances joined in",
    };

    private async Task<(OperationSample[] Samples, List<int> Claims)> RunAsync(ScenarioContext context, CeilingSession session, int ops, bool record)
    {
        using var stopping = CancellationTokenSource.CreateLinkedTokenSource(context.Cancellation);
        var ct = stopping.Token;
        var owner = $"ceiling-{Environment.ProcessId}";
        var completions = new ConcurrentDictionary<Guid, TaskCompletionSource>();
        // A coalescing wake-up, as the in-process transport: any number of inserts wake one sleeping claim.
        var wake = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite });
        var work = Channel.CreateBounded<ClaimedSignal>(Workers);
        var idle = new SemaphoreSlim(Workers, Workers);
        var claims = new List<int>();

        var dispatcher = Task.Run(async () =>
        {
            while (!ct.IsCancellationRequested)
            {
                await idle.WaitAsync(ct);
                var free = 1;
                while (free < Workers && idle.Wait(0, CancellationToken.None))
                {
                    free++;
                }

                var claimed = await session.ClaimAsync(owner, free, ct);
                if (free > claimed.Count)
                {
                    idle.Release(free - claimed.Count);
                }

                if (claimed.Count > 0)
                {
                    claims.Add(claimed.Count);
                    foreach (var signal in claimed)
                    {
                        await work.Writer.WriteAsync(signal, ct);
                    }

                    if (claimed.Count == free)
                    {
                        continue;
                    }
                }

                // Nothing more due: sleep until an insert wakes the dispatcher, or the poll.
                try
                {
                    await wake.Reader.WaitToReadAsync(ct).AsTask().WaitAsync(Poll, ct);
                }
                catch (TimeoutException)
                {
                }

                wake.Reader.TryRead(out _);
            }
        }, ct);

        var workers = Enumerable.Range(0, Workers).Select(_ => Task.Run(async () =>
        {
            await foreach (var claimed in work.Reader.ReadAllAsync(ct))
            {
                try
                {
                    await session.CompleteAsync(claimed, ct);
                    if (completions.TryRemove(claimed.Signal.InstanceId, out var done))
                    {
                        done.TrySetResult();
                    }
                }
                catch (Exception e) when (e is not OperationCanceledException || !ct.IsCancellationRequested)
                {
                    if (completions.TryRemove(claimed.Signal.InstanceId, out var done))
                    {
                        done.TrySetException(e);
                    }
                }
                finally
                {
                    idle.Release();
                }
            }
        }, ct)).ToArray();

        var samples = new OperationSample[ops];
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(_ => Task.Run(async () =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < ops)
            {
                var clock = new PhaseClock();
                try
                {
                    var instanceId = Guid.CreateVersion7();
                    var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    completions[instanceId] = done;
                    await session.StartAsync(instanceId, ct);
                    clock.Lap(Phases.Start);
                    await session.EnqueueAsync(Guid.CreateVersion7(), instanceId, ct);
                    wake.Writer.TryWrite(true);
                    clock.Lap(CeilingScenario.SignalInsert);
                    // Bounded as the load's long-poll is: a completion that never comes fails the operation.
                    await done.Task.WaitAsync(TimeSpan.FromSeconds(30), ct);
                    clock.Lap(Phases.SignalToCompletion);
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
        }, ct)));

        await stopping.CancelAsync();
        work.Writer.TryComplete();
        foreach (var task in workers.Append(dispatcher))
        {
            try
            {
                await task;
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
            }
        }

        return (samples, claims);
    }
}
