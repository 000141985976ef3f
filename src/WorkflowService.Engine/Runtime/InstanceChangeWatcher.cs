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
/// reads a period, not a thousand. Nothing is read while nobody waits.
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

    /// <summary>Periods in which something was waited on (and read).</summary>
    public long Rechecks => Interlocked.Read(ref _rechecks);

    /// <summary>Queries the rechecks made: one a period up to <see cref="ChunkSize"/> watched instances.</summary>
    public long Reads => Interlocked.Read(ref _reads);

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A store failure is logged and the read tried again next period; the long-polls end by their own deadlines meanwhile.")]
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(options.Value.LongPollRecheck, time);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                try
                {
                    await RecheckAsync(stoppingToken).ConfigureAwait(false);
                }
                catch (Exception e) when (e is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
                {
                    LogRecheckFailed(logger, e, feed.Watched);
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
        foreach (var chunk in watched.Chunk(ChunkSize))
        {
            Interlocked.Increment(ref _reads);
            feed.Recheck(chunk, await instances.GetInstancesAsync(chunk, cancellationToken).ConfigureAwait(false));
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not re-read the {Watched} instances long-polls wait on; trying again next period")]
    private static partial void LogRecheckFailed(ILogger logger, Exception exception, int watched);
}
