using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The hosted retention job: every Retention:Interval, the node that takes the "retention" lease purges what is due, in
/// bounded batches, renewing the lease before each one. Other nodes find the lease taken and wait for the next round;
/// when the holder dies its lease runs out and another node takes over. Nothing runs unless a period is set.
/// </summary>
public sealed partial class RetentionJob(
    RetentionPurge purge,
    NodeIdentity node,
    IOptions<RetentionOptions> options,
    IStoreFailures failures,
    TimeProvider time,
    ILogger<RetentionJob> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var settings = options.Value;
        if (!settings.Enabled)
        {
            return;
        }

        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                // Another node's turn (or an operator's purge) when the lease is taken: this one waits for the next round.
                if (await purge.RunUnderLeaseAsync(node.Id, keepGoing: null, stoppingToken).ConfigureAwait(false) is { Rows.Total: > 0 } report)
                {
                    LogRound(logger, report.Rows.Instances, report.Rows.Total, report.Rows.Deliveries, report.Complete);
                }
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (failures.IsUnavailable(e))
            {
                LogStoreUnavailable(logger, failures.DescribeUnavailable(e));
            }
#pragma warning disable CA1031 // The job outlives any one failure: it logs it and tries again next round.
            catch (Exception e)
#pragma warning restore CA1031
            {
                LogFailed(logger, e);
            }

            await Task.Delay(settings.Interval, time, stoppingToken).ConfigureAwait(false);
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Retention round deleted {Instances} ended instances ({Rows} rows, {Deliveries} of them event deliveries); complete: {Complete}")]
    private static partial void LogRound(ILogger logger, int instances, int rows, int deliveries, bool complete);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Retention round skipped: the store is unavailable ({Reason}); trying again next round")]
    private static partial void LogStoreUnavailable(ILogger logger, string reason);

    [LoggerMessage(Level = LogLevel.Error, Message = "Retention round failed; trying again next round")]
    private static partial void LogFailed(ILogger logger, Exception exception);
}
