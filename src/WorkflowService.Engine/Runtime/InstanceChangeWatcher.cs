using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Finds the changes other nodes commit to the instances this node's long-polls wait on: every
/// <see cref="WorkerOptions.LongPollRecheck"/> it reads all watched instances at once (in chunks of
/// <see cref="ChunkSize"/>), and wakes the waiters of those whose version moved. A thousand long-polls cost one or two
/// reads a period, not a thousand. Nothing is read while nobody waits. Between periods, the instances another node
/// says it committed (<see cref="InstanceChangeFeed.Hint"/>, carried by the wake-up transport) are read at once, so a
/// long-poll answers within milliseconds of a commit anywhere; the period is the safety net for lost hints.
/// </summary>
public sealed partial class InstanceChangeWatcher(
    InstanceChangeFeed feed,
    IInstanceStore instances,
    TimeProvider time,
    IOptions<WorkerOptions> options,
    ILogger<InstanceChangeWatcher> logger) : BackgroundService
{
    /// <summary>Instances read in one query: well under every store's limit on parameters.</summary>
    public const int ChunkSize = 500;

    private long _rechecks;
    private long _reads;
    private long _hintedReads;

    /// <summary>Periods in which something was waited on (and read).</summary>
    public long Rechecks => Interlocked.Read(ref _rechecks);

    /// <summary>Queries made: one a period (up to <see cref="ChunkSize"/> watched instances), and one for each batch of hints.</summary>
    public long Reads => Interlocked.Read(ref _reads);

    /// <summary>Batches of hints read (another node's commits of instances waited on here).</summary>
    public long HintedReads => Interlocked.Read(ref _hintedReads);

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A store failure is logged and the read tried again next period; the long-polls end by their own deadlines meanwhile.")]
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var period = options.Value.LongPollRecheck;
        var next = time.GetTimestamp() + (long)(period.TotalSeconds * time.TimestampFrequency);
        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                var remaining = time.GetElapsedTime(time.GetTimestamp(), next);
                var hinted = false;
                if (remaining > TimeSpan.Zero)
                {
                    try
                    {
                        await feed.HintArrived.WaitAsync(remaining, time, stoppingToken).ConfigureAwait(false);
                        hinted = true;
                    }
                    catch (TimeoutException)
                    {
                    }
                }

                try
                {
                    if (hinted)
                    {
                        await ReadHintedAsync(stoppingToken).ConfigureAwait(false);
                    }
                    else
                    {
                        try
                        {
                            await RecheckAsync(stoppingToken).ConfigureAwait(false);
                        }
                        finally
                        {
                            // A full period after the read ends: a slow store is not read back to back.
                            next = time.GetTimestamp() + (long)(period.TotalSeconds * time.TimestampFrequency);
                        }
                    }
                }
                catch (Exception e) when (e is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
                {
                    LogRecheckFailed(logger, e, feed.Watched);
                    if (hinted)
                    {
                        // Not again at once: the period's re-check reads them.
                        feed.TakeHinted();
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    /// <summary>One recheck of every watched instance.</summary>
    public async Task RecheckAsync(CancellationToken cancellationToken)
    {
        var watched = feed.ToRecheck();
        if (watched.Count == 0)
        {
            return;
        }

        Interlocked.Increment(ref _rechecks);
        await ReadAsync(watched, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Reads the instances other nodes said committed, that are waited on here.</summary>
    private async Task ReadHintedAsync(CancellationToken cancellationToken)
    {
        var hinted = feed.TakeHinted();
        if (hinted.Count > 0)
        {
            Interlocked.Increment(ref _hintedReads);
            await ReadAsync(hinted, cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task ReadAsync(List<Guid> ids, CancellationToken cancellationToken)
    {
        foreach (var chunk in ids.Chunk(ChunkSize))
        {
            Interlocked.Increment(ref _reads);
            feed.Recheck(chunk, await instances.GetInstancesAsync(chunk, cancellationToken).ConfigureAwait(false));
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not re-read the {Watched} instances long-polls wait on; trying again next period")]
    private static partial void LogRecheckFailed(ILogger logger, Exception exception, int watched);
}
