using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
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
/// <remarks>
/// The claim loop's steps that wait on the store or the wake-up (<see cref="ClaimAsync"/>, <see cref="SleepAsync"/>) are
/// pooled value-task methods: a batch allocates no state machine of its own for them. The hand-out completes synchronously
/// while the workers' queue has room, which it always has for the workers the claim counted idle.
/// </remarks>
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

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var settings = options.Value;
        if (!settings.Enabled)
        {
            return;
        }

        var workers = StartWorkers(settings.SignalWorkers);
        // Claims outliving a lease are extended until the workers have stopped (their drain included).
        var keeping = Task.Run(() => leases.RunAsync(_abort.Token), CancellationToken.None);
        LogStarted(logger, node.Id, workers.Count);
        try
        {
            await ClaimAndHandOutAsync(workers, settings, stoppingToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
        finally
        {
            await StopWorkersAsync(workers, settings.ShutdownTimeout).ConfigureAwait(false);
            await keeping.ConfigureAwait(false);
            await ReleaseClaimsAsync(settings.ShutdownTimeout).ConfigureAwait(false);
        }
    }

    private WorkerPool StartWorkers(int count)
    {
        // Never disposed: a SemaphoreSlim holds nothing to dispose unless its AvailableWaitHandle is read (it is not), and
        // workers that outlive a timed-out drain may still release it.
#pragma warning disable CA2000, CA2025 // see above
        var idle = new SemaphoreSlim(count, count);
        var queue = Channel.CreateBounded<IReadOnlyList<ClaimedSignal>>(new BoundedChannelOptions(count) { SingleReader = false, SingleWriter = true });
        var running = Enumerable.Range(0, count).Select(_ => Task.Run(() => WorkAsync(queue.Reader, idle))).ToArray();
#pragma warning restore CA2000, CA2025
        return new WorkerPool(count, idle, queue.Writer, running);
    }

    /// <summary>
    /// The claim loop: waits for an idle worker, claims as many due signals as workers are idle, hands them out, and
    /// sleeps when fewer were due than it asked for.
    /// </summary>
    private async Task ClaimAndHandOutAsync(WorkerPool workers, WorkerOptions settings, CancellationToken stoppingToken)
    {
        // Whether the last sleep ended at a time (the poll, or a due time) rather than by a notification: then what is due
        // next is looked up after the claim even when it found work, since no notification announced that work.
        var timedOut = false;
        var trigger = ClaimTriggers.Start;
        while (!stoppingToken.IsCancellationRequested)
        {
            await workers.Idle.WaitAsync(stoppingToken).ConfigureAwait(false);
            var free = workers.TakeIdle();
            var claimed = await ClaimAsync(free, trigger, settings.LeaseDuration, stoppingToken).ConfigureAwait(false);
            if (claimed is null)
            {
                workers.Idle.Release(free);
                await Task.Delay(settings.ErrorBackoff, time, stoppingToken).ConfigureAwait(false);
                trigger = ClaimTriggers.Retry;
                continue;
            }

            await HandOutAsync(workers, claimed, free, stoppingToken).ConfigureAwait(false);
            if (claimed.Count == free)
            {
                trigger = ClaimTriggers.Backlog;
                continue;
            }

            timedOut = await SleepAsync(claimed.Count, timedOut, settings.PollInterval, stoppingToken).ConfigureAwait(false);
            trigger = timedOut ? ClaimTriggers.Time : ClaimTriggers.WakeUp;
        }
    }

    /// <summary>
    /// Claims up to <paramref name="free"/> due signals, in the claim's span, and counts them and their age; null when the
    /// store failed (logged once the span has ended).
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<IReadOnlyList<ClaimedSignal>?> ClaimAsync(int free, string trigger, TimeSpan lease, CancellationToken stoppingToken)
    {
        // The claim reads the batch's instances with it; a worker re-reads its own only after a conflict.
        IReadOnlyList<ClaimedSignal>? claimed = null;
        Exception? failure = null;
        var claim = EngineTelemetry.StartClaim(node.Id, free, trigger);
        try
        {
            claimed = await signals.ClaimDueWorkAsync(node.Id, free, lease, stoppingToken).ConfigureAwait(false);
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
            LogStoreError(logger, failure);
        }

        return claimed;
    }

    /// <summary>
    /// Gives the idle workers the claim did not need back, then queues the claimed signals to the workers: the signals of
    /// one instance to one worker, in due order (run side by side, all but one would lose the race on the instance's
    /// version and run again). The workers that one instance's group does not need are free for the next claim.
    /// </summary>
    private async ValueTask HandOutAsync(WorkerPool workers, IReadOnlyList<ClaimedSignal> claimed, int free, CancellationToken stoppingToken)
    {
        if (free > claimed.Count)
        {
            workers.Idle.Release(free - claimed.Count);
        }

        if (claimed.Count > 0)
        {
            var claimedAt = clock.NowMs();
            foreach (var work in claimed)
            {
                metrics.SignalClaimed(claimedAt - work.Signal.DueAtMs);
            }
        }

        foreach (var group in claimed.GroupBy(work => work.Signal.InstanceId))
        {
            var batch = group.ToList();
            if (batch.Count > 1)
            {
                workers.Idle.Release(batch.Count - 1);
            }

            await workers.Queue.WriteAsync(batch, stoppingToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Sleeps until a wake-up, the next due signal, or the poll interval; true when a time ended it rather than a
    /// notification.
    /// </summary>
    /// <remarks>
    /// After a claim that found work following a notification, the next due time is not looked up: any signal committed
    /// meanwhile has already woken the transport (a notification while the dispatcher works completes its next wait at
    /// once, and one due later than its planned look ends its next wait on time), so the lookup would only cost a query
    /// per batch. After a sleep that ended at a time (the poll, a due time), it is looked up: the signals due just after
    /// the ones claimed (a burst of timers) were announced by no notification since.
    /// </remarks>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> SleepAsync(int claimed, bool timedOut, TimeSpan pollInterval, CancellationToken stoppingToken)
    {
        var until = clock.NowMs() + (long)pollInterval.TotalMilliseconds;
        if (claimed == 0 || timedOut)
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

            if (claimed == 0)
            {
                metrics.IdlePoll();
            }
        }

        return !await wakeUp.WaitAsync(until, stoppingToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Takes no more work and waits for the workers to finish theirs, up to <paramref name="timeout"/> (stopping has
    /// been asked for already, so the stopping token does not bound it); then abandons what is still running.
    /// </summary>
    private async Task StopWorkersAsync(WorkerPool workers, TimeSpan timeout)
    {
        workers.Queue.TryComplete();
        try
        {
            await Task.WhenAll(workers.Running).WaitAsync(timeout, time, CancellationToken.None).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            LogShutdownTimeout(logger, timeout);
        }

        await _abort.CancelAsync().ConfigureAwait(false);
    }

    /// <summary>Releases this node's claims, so that other nodes take them at once rather than when their leases end.</summary>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Shutdown must finish: a store failure while this node releases its leases is logged, and the leases expire by themselves.")]
    private async Task ReleaseClaimsAsync(TimeSpan timeout)
    {
        try
        {
            using var bounded = new CancellationTokenSource(timeout);
            var released = await signals.ReleaseLeasesAsync(node.Id, bounded.Token).ConfigureAwait(false);
            LogStopped(logger, node.Id, released);
        }
        catch (Exception e)
        {
            LogStoreError(logger, e);
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

    /// <summary>
    /// The workers as the claim loop sees them: how many there are, a count of the idle ones, the queue that hands them
    /// claimed signals, and their loops.
    /// </summary>
    private sealed class WorkerPool(int count, SemaphoreSlim idle, ChannelWriter<IReadOnlyList<ClaimedSignal>> queue, Task[] running)
    {
        public int Count => count;
        public SemaphoreSlim Idle => idle;
        public ChannelWriter<IReadOnlyList<ClaimedSignal>> Queue => queue;
        public Task[] Running => running;

        /// <summary>After one idle worker was waited for: takes every other idle one too, and says how many were taken.</summary>
        public int TakeIdle()
        {
            var free = 1;
            while (free < count && idle.Wait(0, CancellationToken.None))
            {
                free++;
            }

            return free;
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
