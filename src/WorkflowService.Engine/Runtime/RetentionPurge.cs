using System.Text.Json;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>What one purge found or deleted: per scope (a definition with its own period, or every other one).</summary>
/// <param name="DryRun">Whether it only counted.</param>
/// <param name="Scopes">Each period applied, with the instances found due (a dry run) or deleted.</param>
/// <param name="Rows">The rows deleted, per table (zero in a dry run).</param>
/// <param name="Complete">False when the purge stopped before the end (its lease ran out, or it was stopped): the next one goes on.</param>
/// <param name="DeliveredEvents">The delivered events' deliveries found due (a dry run) or deleted; null when Retention:DeliveredEvents is unset.</param>
public sealed record RetentionReport(bool DryRun, IReadOnlyList<RetentionScopeReport> Scopes, PurgedRows Rows, bool Complete,
    RetentionDeliveredReport? DeliveredEvents);

/// <summary>The share of a purge that deletes delivered events' deliveries, whatever their instance's state.</summary>
/// <param name="Period">How long a delivery is kept after it was delivered.</param>
/// <param name="DeliveredBefore">Deliveries delivered before this are due.</param>
/// <param name="Deliveries">Deliveries due (a dry run) or deleted.</param>
public sealed record RetentionDeliveredReport(TimeSpan Period, DateTime DeliveredBefore, long Deliveries);

/// <summary>One period's share of a purge.</summary>
/// <param name="Definition">The definition with a period of its own; null for every other definition (the global period).</param>
/// <param name="Period">Its retention period.</param>
/// <param name="EndedBefore">Instances that ended before this are due.</param>
/// <param name="Instances">Instances due (a dry run) or deleted.</param>
public sealed record RetentionScopeReport(string? Definition, TimeSpan Period, DateTime EndedBefore, long Instances);

/// <summary>
/// Deletes ended instances whose retention period is over, in bounded batches, archiving each batch first when
/// Retention:Export says so; then the deliveries of delivered events older than Retention:DeliveredEvents. The hosted job runs it on one node at a time; an operator runs it from the command line or
/// the API (with a dry run that only counts).
/// </summary>
public sealed partial class RetentionPurge(
    IRetentionStore store,
    IStoreClock clock,
    IOptions<RetentionOptions> options,
    EngineMetrics metrics,
    TimeProvider time,
    ILogger<RetentionPurge> logger)
{
    /// <summary>The lease that lets one purge at a time delete (the job on one node, or an operator's purge).</summary>
    public const string LeaseName = "retention";

    /// <summary>
    /// Deletes what is due while holding the <see cref="LeaseName"/> lease for <paramref name="owner"/>, renewing it before
    /// every batch and giving it back at the end; null when another owner holds it (the job on another node, or another
    /// operator's purge), so that two purges never delete, or archive, the same instances at once.
    /// </summary>
    public async Task<RetentionReport?> RunUnderLeaseAsync(string owner, Func<CancellationToken, Task<bool>>? keepGoing,
        CancellationToken cancellationToken)
    {
        var lease = options.Value.LeaseDuration;
        if (!await store.TryTakeLeaseAsync(LeaseName, owner, lease, cancellationToken).ConfigureAwait(false))
        {
            return null;
        }

        try
        {
            return await RunAsync(dryRun: false, async ct =>
                (keepGoing is null || await keepGoing(ct).ConfigureAwait(false))
                && await store.TryTakeLeaseAsync(LeaseName, owner, lease, ct).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            // Given back at once, so that the next purge (or a node that stops) does not wait out a whole lease.
            await store.ReleaseLeaseAsync(LeaseName, owner, CancellationToken.None).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Purges (or, with <paramref name="dryRun"/>, counts) every scope. <paramref name="keepGoing"/> is asked before each
    /// batch (the job's lease renewal); false stops the purge there.
    /// </summary>
    public async Task<RetentionReport> RunAsync(bool dryRun, Func<CancellationToken, Task<bool>>? keepGoing, CancellationToken cancellationToken)
    {
        var settings = options.Value;
        var now = clock.Now().UtcDateTime;
        var scopes = new List<RetentionScopeReport>();
        var rows = default(PurgedRows);
        var complete = true;
        foreach (var (definition, period) in Periods(settings))
        {
            var scope = new RetentionScope(now - period, definition,
                definition is null ? settings.Definitions.Keys.ToList() : []);
            long instances = 0;
            if (dryRun)
            {
                instances = await store.CountExpiredAsync(scope, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                (var deleted, complete) = await PurgeScopeAsync(scope, settings, keepGoing, cancellationToken).ConfigureAwait(false);
                instances = deleted.Instances;
                rows += deleted;
            }

            scopes.Add(new RetentionScopeReport(definition, period, scope.EndedBefore, instances));
            if (!complete)
            {
                return new RetentionReport(dryRun, scopes, rows, complete, null);
            }
        }

        RetentionDeliveredReport? delivered = null;
        if (settings.DeliveredEvents is { } kept)
        {
            var before = now - kept;
            long deliveries;
            if (dryRun)
            {
                deliveries = await store.CountDeliveredAsync(before, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                (var deleted, complete) = await PurgeDeliveredAsync(before, settings, keepGoing, cancellationToken).ConfigureAwait(false);
                deliveries = deleted.Deliveries;
                rows += deleted;
            }

            delivered = new RetentionDeliveredReport(kept, before, deliveries);
        }

        return new RetentionReport(dryRun, scopes, rows, complete, delivered);
    }

    /// <summary>The periods in force: each definition's own, then the global one for every other definition.</summary>
    private static IEnumerable<(string? Definition, TimeSpan Period)> Periods(RetentionOptions settings)
    {
        foreach (var (definition, period) in settings.Definitions.OrderBy(d => d.Key, StringComparer.Ordinal))
        {
            yield return (definition, period);
        }

        if (settings.EndedInstances is { } global)
        {
            yield return (null, global);
        }
    }

    private Task<(PurgedRows Rows, bool Complete)> PurgeScopeAsync(RetentionScope scope, RetentionOptions settings,
        Func<CancellationToken, Task<bool>>? keepGoing, CancellationToken cancellationToken) =>
        InBatchesAsync(settings, keepGoing, async ct =>
        {
            var due = await store.FindExpiredAsync(scope, settings.BatchSize, ct).ConfigureAwait(false);
            if (due.Count == 0)
            {
                return (0, default);
            }

            if (!string.IsNullOrWhiteSpace(settings.Export))
            {
                await ArchiveAsync(settings.Export, due, ct).ConfigureAwait(false);
            }

            var deleted = await store.DeleteEndedAsync(due, ct).ConfigureAwait(false);
            LogBatch(logger, deleted.Instances, deleted.Total, scope.Definition ?? "*");
            return (due.Count, deleted);
        }, cancellationToken);

    /// <summary>
    /// Deletes delivered deliveries older than <paramref name="before"/>, whatever their instance's state. Not archived:
    /// each stands for an event of its instance's history, which is archived with the instance.
    /// </summary>
    private Task<(PurgedRows Rows, bool Complete)> PurgeDeliveredAsync(DateTime before, RetentionOptions settings,
        Func<CancellationToken, Task<bool>>? keepGoing, CancellationToken cancellationToken) =>
        InBatchesAsync(settings, keepGoing, async ct =>
        {
            var deleted = await store.DeleteDeliveredAsync(before, settings.BatchSize, ct).ConfigureAwait(false);
            if (deleted > 0)
            {
                LogDeliveredBatch(logger, deleted);
            }

            return (deleted, new PurgedRows(0, 0, 0, 0, deleted));
        }, cancellationToken);

    /// <summary>
    /// Runs <paramref name="batch"/> (which returns how many it found, at most Retention:BatchSize, and the rows it
    /// deleted) until one finds less than a full batch, asking <paramref name="keepGoing"/> before each and pausing
    /// Retention:BatchPause between them, so that a backlog never holds the hot path up.
    /// </summary>
    private async Task<(PurgedRows Rows, bool Complete)> InBatchesAsync(RetentionOptions settings, Func<CancellationToken, Task<bool>>? keepGoing,
        Func<CancellationToken, Task<(int Found, PurgedRows Deleted)>> batch, CancellationToken cancellationToken)
    {
        var rows = default(PurgedRows);
        while (true)
        {
            if (keepGoing is not null && !await keepGoing(cancellationToken).ConfigureAwait(false))
            {
                return (rows, false);
            }

            var (found, deleted) = await batch(cancellationToken).ConfigureAwait(false);
            rows += deleted;
            if (deleted.Total > 0)
            {
                metrics.Purged(deleted);
            }

            if (found < settings.BatchSize)
            {
                return (rows, true);
            }

            if (settings.BatchPause > TimeSpan.Zero)
            {
                await Task.Delay(settings.BatchPause, time, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// Writes the batch as JSON lines before it is deleted, flushed to the disk: a crash between the two archives an
    /// instance twice (the next purge writes it again), never loses it.
    /// </summary>
    private async Task ArchiveAsync(string export, IReadOnlyList<Guid> due, CancellationToken cancellationToken)
    {
        var archived = await store.ReadForArchiveAsync(due, cancellationToken).ConfigureAwait(false);
        var toStandardOutput = string.Equals(export, "stdout", StringComparison.OrdinalIgnoreCase);
        var stream = toStandardOutput
            ? Console.OpenStandardOutput()
            : new FileStream(export, FileMode.Append, FileAccess.Write, FileShare.Read, 64 * 1024, useAsync: true);
        await using var _ = stream.ConfigureAwait(false);
        foreach (var instance in archived)
        {
            await JsonSerializer.SerializeAsync(stream, instance, EngineJson.Options, cancellationToken).ConfigureAwait(false);
            stream.WriteByte((byte)'\n');
        }

        await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
        if (stream is FileStream file)
        {
            // To the disk, not only the page cache: the rows are deleted next.
            await Task.Run(() => file.Flush(flushToDisk: true), cancellationToken).ConfigureAwait(false);
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Retention deleted {Instances} ended instances ({Rows} rows) of {Definition}")]
    private static partial void LogBatch(ILogger logger, int instances, int rows, string definition);

    [LoggerMessage(Level = LogLevel.Information, Message = "Retention deleted {Deliveries} deliveries of delivered events")]
    private static partial void LogDeliveredBatch(ILogger logger, int deliveries);
}
