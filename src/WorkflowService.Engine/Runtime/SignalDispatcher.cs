using System.Diagnostics.CodeAnalysis;
using System.Threading.Channels;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The node's signal workers: one loop claims due signals in batches (as many as there are idle workers) and hands
/// them to the workers (the signals of one instance to one worker, in due order); when nothing is due it waits for a wake-up, bounded by the poll interval and the next due time.
/// Shutdown stops claiming, waits for running work up to a deadline, then releases this node's claims.
/// </summary>
public sealed partial class SignalDispatcher(
    ISignalQueue signals,
    IStoreClock clock,
    SignalProcessor processor,
    LeaseKeeper leases,
    IWakeUpTransport wakeUp,
    NodeIdentity node,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<WorkerOptions> options,
    ILogger<SignalDispatcher> logger) : BackgroundService
{
    private readonly CancellationTokenSource _abort = new();

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Shutdown must finish: a store failure while this node releases its leases is logged, and the leases expire by themselves.")]
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var settings = options.Value;
        if (!settings.Enabled)
        {
            return;
        }

        var workers = settings.SignalWorkers;
        // Never disposed: a SemaphoreSlim holds nothing to dispose unless its AvailableWaitHandle is read (it is not), and
        // workers that outlive a timed-out drain may still release it.
#pragma warning disable CA2000, CA2025 // see above
        var idle = new SemaphoreSlim(workers, workers);
        var queue = Channel.CreateBounded<IReadOnlyList<ClaimedSignal>>(new BoundedChannelOptions(workers) { SingleReader = false, SingleWriter = true });
        var running = Enumerable.Range(0, workers).Select(_ => Task.Run(() => WorkAsync(queue.Reader, idle))).ToArray();
#pragma warning restore CA2000, CA2025
        // Claims outliving a lease are extended until the workers have stopped (the drain below included).
        var keeping = Task.Run(() => leases.RunAsync(_abort.Token), CancellationToken.None);
        LogStarted(logger, node.Id, workers);

        // Whether the last sleep ended at a time (the poll, or a due time) rather than by a notification: then what is due
        // next is looked up after the claim even when it found work, since no notification announced that work.
        var timedOut = false;
        var trigger = ClaimTriggers.Start;
        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                await idle.WaitAsync(stoppingToken).ConfigureAwait(false);
                var free = 1;
                while (free < workers && idle.Wait(0, CancellationToken.None))
                {
                    free++;
                }

                // The claim reads the batch's instances with it; a worker re-reads its own only after a conflict.
                IReadOnlyList<ClaimedSignal> claimed = [];
                Exception? failure = null;
                var claim = EngineTelemetry.StartClaim(node.Id, free, trigger);
                try
                {
                    claimed = await signals.ClaimDueWorkAsync(node.Id, free, settings.LeaseDuration, stoppingToken).ConfigureAwait(false);
                    EngineTelemetry.Claimed(claim, claimed.Count);
                    metrics.Claimed(claimed.Count);
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    EngineTelemetry.Failed(claim, e.GetType().Name);
                    failure = e;
                }
                finally
                {
                    claim?.Dispose();
                }

                if (failure is not null)
                {
                    idle.Release(free);
                    LogStoreError(logger, failure);
                    await Task.Delay(settings.ErrorBackoff, time, stoppingToken).ConfigureAwait(false);
                    trigger = ClaimTriggers.Retry;
                    continue;
                }

                if (free > claimed.Count)
                {
                    idle.Release(free - claimed.Count);
                }

                if (claimed.Count > 0)
                {
                    var claimedAt = clock.NowMs();
                    foreach (var work in claimed)
                    {
                        metrics.SignalClaimed(claimedAt - work.Signal.DueAtMs);
                    }
                }

                // Signals of one instance go to one worker, in due order: run side by side, all but one would lose the
                // race on the instance's version and run again. Their other workers are free for the next claim.
                foreach (var group in claimed.GroupBy(work => work.Signal.InstanceId))
                {
                    var signals = group.ToList();
                    if (signals.Count > 1)
                    {
                        idle.Release(signals.Count - 1);
                    }

                    await queue.Writer.WriteAsync(signals, stoppingToken).ConfigureAwait(false);
                }

                if (claimed.Count == free)
                {
                    trigger = ClaimTriggers.Backlog;
                    continue;
                }

                // Sleep until a wake-up, the next due signal, or the poll interval. After a claim that found work following a
                // notification, the next due time is not looked up: any signal committed meanwhile has already woken the
                // transport (a notification while the dispatcher works completes its next wait at once, and one due later
                // than its planned look ends its next wait on time), so the lookup would only cost a query per batch. After a
                // sleep that ended at a time (the poll, a due time), it is looked up: the signals due just after the ones
                // claimed (a burst of timers) were announced by no notification since.
                var until = clock.NowMs() + (long)settings.PollInterval.TotalMilliseconds;
                if (claimed.Count == 0 || timedOut)
                {
                    try
                    {
                        var next = await signals.GetNextDueAsync(stoppingToken).ConfigureAwait(false);
                        if (next is { } due && due < until)
                        {
                            until = due;
                        }
                    }
                    catch (Exception e) when (e is not OperationCanceledException)
                    {
                        LogStoreError(logger, e);
                    }

                    if (claimed.Count == 0)
                    {
                        metrics.IdlePoll();
                    }
                }

                timedOut = !await wakeUp.WaitAsync(until, stoppingToken).ConfigureAwait(false);
                trigger = timedOut ? ClaimTriggers.Time : ClaimTriggers.WakeUp;
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
        finally
        {
            queue.Writer.TryComplete();
            var drained = Task.WhenAll(running);
            try
            {
                // Stopping has been asked for already: the drain is bounded by its own timeout, not by the stopping token.
                await drained.WaitAsync(settings.ShutdownTimeout, time, CancellationToken.None).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                LogShutdownTimeout(logger, settings.ShutdownTimeout);
                await _abort.CancelAsync().ConfigureAwait(false);
            }

            await _abort.CancelAsync().ConfigureAwait(false);
            await keeping.ConfigureAwait(false);
            try
            {
                using var bounded = new CancellationTokenSource(settings.ShutdownTimeout);
                var released = await signals.ReleaseLeasesAsync(node.Id, bounded.Token).ConfigureAwait(false);
                LogStopped(logger, node.Id, released);
            }
            catch (Exception e)
            {
                LogStoreError(logger, e);
            }
        }
    }

    private async Task WorkAsync(ChannelReader<IReadOnlyList<ClaimedSignal>> reader, SemaphoreSlim idle)
    {
        await foreach (var signals in reader.ReadAllAsync().ConfigureAwait(false))
        {
            // The later signals of one instance wait for the earlier ones: their claims are kept from now on too.
            foreach (var work in signals)
            {
                leases.Hold(work.Signal);
            }

            try
            {
                for (var i = 0; i < signals.Count; i++)
                {
                    // The claim's read of the instance holds for the first signal; each later one reads what the one
                    // before it committed.
                    await ProcessAsync(signals[i].Signal, i == 0 ? signals[i].Instance : null).ConfigureAwait(false);
                    leases.Release(signals[i].Signal);
                }
            }
            catch (OperationCanceledException)
            {
            }
            finally
            {
                foreach (var work in signals)
                {
                    leases.Release(work.Signal);
                }

                idle.Release();
            }
        }
    }

    private async Task ProcessAsync(SignalMessage signal, WorkflowInstance? instance)
    {
        // The run continues the trace the signal was sent in; the claim's span, a root of its own, has ended.
        using var run = EngineTelemetry.StartRun(signal, node.Id);
        try
        {
            await processor.ProcessAsync(signal, instance, _abort.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException || !_abort.IsCancellationRequested)
        {
            // The claim stays until its lease expires; another attempt (here or on another node) follows then.
            EngineTelemetry.Failed(run, e.GetType().Name);
            LogProcessingError(logger, e, signal.Id);
        }
    }

    public override void Dispose()
    {
        _abort.Dispose();
        base.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Signal dispatcher started on node {NodeId} with {Workers} workers")]
    private static partial void LogStarted(ILogger logger, string nodeId, int workers);

    [LoggerMessage(Level = LogLevel.Information, Message = "Signal dispatcher on node {NodeId} stopped; released {Released} claims")]
    private static partial void LogStopped(ILogger logger, string nodeId, int released);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Signal workers did not finish within {Timeout}; abandoning their work")]
    private static partial void LogShutdownTimeout(ILogger logger, TimeSpan timeout);

    [LoggerMessage(Level = LogLevel.Error, Message = "Store call failed in the signal dispatcher")]
    private static partial void LogStoreError(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Error, Message = "Processing signal {SignalId} failed; its lease will expire and it will be retried")]
    private static partial void LogProcessingError(ILogger logger, Exception exception, Guid signalId);
}
