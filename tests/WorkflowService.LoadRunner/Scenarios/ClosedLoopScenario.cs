using System.Diagnostics;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The predecessor's load shape: <see cref="Scenario.Ops"/> operations through <see cref="Scenario.Concurrency"/>
/// concurrent clients, each starting its next operation when its previous one completed. Subclasses supply one operation.
/// </summary>
internal abstract class ClosedLoopScenario : Scenario
{
    /// <summary>One operation; <paramref name="index"/> is unique within the run (warm-up indices are negative).</summary>
    protected abstract Task<OperationSample> OperationAsync(ScenarioContext context, int index);

    /// <summary>
    /// A fresh service process per scenario: enough operations for JIT tiering, the EF query caches and the connection
    /// pools (32, or a tenth of the scenario up to 500), run at the scenario's own concurrency.
    /// </summary>
    public override int WarmUpOps => Math.Max(32, Math.Min(Ops / 10, 500));

    public override Task WarmUpAsync(ScenarioContext context) =>
        RunLoopAsync(context, WarmUpOps, Math.Min(Concurrency, WarmUpOps), i => -1 - i, record: false);

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var clock = Stopwatch.StartNew();
        var samples = await RunLoopAsync(context, Ops, Concurrency, i => i, record: true);
        return new Measurement(samples, clock.Elapsed);
    }

    private Task<OperationSample[]> RunLoopAsync(ScenarioContext context, int ops, int concurrency, Func<int, int> index, bool record) =>
        RunLoopAsync(context, ops, concurrency, index, record, i => OperationAsync(context, i));

    /// <summary>
    /// <paramref name="ops"/> operations through <paramref name="concurrency"/> clients, each starting its next when its
    /// previous one ended; an operation that throws is a failed sample. <paramref name="index"/> maps a position to the
    /// index the operation gets.
    /// </summary>
    internal static async Task<OperationSample[]> RunLoopAsync(ScenarioContext context, int ops, int concurrency, Func<int, int> index, bool record,
        Func<int, Task<OperationSample>> operation)
    {
        var samples = new OperationSample[ops];
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, concurrency).Select(_ => Task.Run(async () =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < ops)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                var started = Stopwatch.GetTimestamp();
                OperationSample sample;
                try
                {
                    sample = await operation(index(i));
                }
                catch (Exception e) when (e is not OperationCanceledException || !context.Cancellation.IsCancellationRequested)
                {
                    sample = OperationSample.Failed(Stopwatch.GetElapsedTime(started).TotalMilliseconds, e);
                }

                samples[i] = sample;
                if (record)
                {
                    context.Progress.Record(sample.Ok);
                }
            }
        })));
        return samples;
    }
}
