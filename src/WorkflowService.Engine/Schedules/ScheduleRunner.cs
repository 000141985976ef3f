using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Engine.Schedules;

/// <summary>
/// Fires schedules on every node: a loop leases the schedules due by the store's clock, decides each one's occurrences
/// (<see cref="OccurrencePlan"/>, then <see cref="OverlapDecision"/>), starts them through the idempotent start and
/// writes the schedule back. Between passes it waits for a change on this node, at most the poll interval. A node that
/// dies mid-pass leaves a lease that expires; the next node decides the same occurrences, and the idempotent start
/// finds the instances already started.
/// </summary>
public sealed partial class ScheduleRunner(
    IScheduleStore store,
    IInstanceStore instances,
    IStoreClock clock,
    OccurrenceStarter occurrences,
    WorkflowRuntime runtime,
    ScheduleDoorbell doorbell,
    NodeIdentity node,
    TimeProvider time,
    IOptions<ScheduleOptions> options,
    ILogger<ScheduleRunner> logger) : BackgroundService
{
    private long _passes;

    /// <summary>Passes made so far (a test waits for one that read the clock after it moved).</summary>
    public long Passes => Interlocked.Read(ref _passes);

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var settings = options.Value;
        if (!settings.Enabled)
        {
            return;
        }

        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                var wait = await PassAsync(settings, stoppingToken).ConfigureAwait(false);
                Interlocked.Increment(ref _passes);
                if (wait > TimeSpan.Zero)
                {
                    await doorbell.WaitAsync(wait, time, stoppingToken).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
        finally
        {
            await ReleaseClaimsAsync(settings.ShutdownTimeout).ConfigureAwait(false);
        }
    }

    /// <summary>One claim and the fires of what it claimed; how long to wait before the next (none when the batch was full).</summary>
    private async Task<TimeSpan> PassAsync(ScheduleOptions settings, CancellationToken stoppingToken)
    {
        IReadOnlyList<Schedule> claimed;
        try
        {
            claimed = await store.ClaimDueSchedulesAsync(node.Id, settings.ClaimBatch, settings.LeaseDuration, stoppingToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogClaimFailed(logger, e);
            return settings.ErrorBackoff;
        }

        foreach (var schedule in claimed)
        {
            try
            {
                await FireAsync(schedule, settings, stoppingToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                // Its lease expires and a pass (here or elsewhere) decides again; what this one started is found then.
                LogFireFailed(logger, schedule.Id, e);
            }
        }

        return claimed.Count == settings.ClaimBatch ? TimeSpan.Zero : settings.PollInterval;
    }

    /// <summary>Starts what is due of one claimed schedule and writes its state back.</summary>
    internal async Task FireAsync(Schedule schedule, ScheduleOptions settings, CancellationToken cancellationToken)
    {
        var now = clock.Now();
        var window = schedule.CatchUpWindowSeconds * 1000;
        var plan = OccurrencePlan.At(ScheduleCalendar.For(schedule), schedule.NextFireMs, now.UnixMs, schedule.CatchUp, window,
            ScheduleJitter.Of(schedule), settings.Limits);
        var previousOpen = schedule.Overlap != ScheduleOverlap.AllowAll && schedule.LastInstanceId is { } last
            && (plan.Run.Count > 0 || schedule.BufferedFireMs is not null)
            && await instances.GetInstanceAsync(schedule.Tenant, last, cancellationToken).ConfigureAwait(false) is { } previous
            && !previous.Status.IsTerminal();
        var decision = OverlapDecision.For(schedule.Overlap, previousOpen, schedule.BufferedFireMs, plan.Run);

        var actions = new List<ScheduleAction>();
        var at = now.UtcDateTime;
        if (plan.SkippedUnseen && schedule.NextFireMs is { } missedFrom)
        {
            actions.Add(new(ScheduleCalendar.Utc(missedFrom), ScheduleAction.Skipped, null,
                $"missed, with the occurrences after it up to the next listed (catchUp {schedule.CatchUp})", at));
        }

        actions.AddRange(plan.Skipped.Select(f => new ScheduleAction(ScheduleCalendar.Utc(f), ScheduleAction.Skipped, null,
            $"missed: more than Schedules:LateAfter late (catchUp {schedule.CatchUp})", at)));
        actions.AddRange(decision.Skipped.Select(f => new ScheduleAction(ScheduleCalendar.Utc(f), ScheduleAction.Skipped, null,
            $"an instance it started is still open (overlap {schedule.Overlap})", at)));
        if (decision.Buffered is { } buffered && buffered != schedule.BufferedFireMs)
        {
            actions.Add(new(ScheduleCalendar.Utc(buffered), ScheduleAction.Buffered, null, "waits for the open instance to end (overlap BufferOne)", at));
        }

        if (decision.CancelPrevious && schedule.LastInstanceId is { } open)
        {
            await runtime.CancelAsync(schedule.Tenant, open, $"a newer occurrence of schedule '{schedule.Name}' starts (overlap CancelPrevious)",
                OccurrenceStarter.ActorOf(schedule), cancellationToken).ConfigureAwait(false);
        }

        foreach (var fire in decision.Start)
        {
            var action = await occurrences.StartAsync(schedule, fire, at, cancellationToken).ConfigureAwait(false);
            actions.Add(action);
            schedule.LastInstanceId = action.InstanceId ?? schedule.LastInstanceId;
            LogFired(logger, schedule.Id, action.FireTime, action.Outcome, action.InstanceId);
        }

        schedule.NextFireMs = plan.NextFireMs;
        schedule.BufferedFireMs = decision.Buffered;
        schedule.Recent = OccurrenceStarter.Remember(schedule.Recent, actions, settings.RecentActions);
        if (actions.Count > 0)
        {
            schedule.UpdatedAt = now.NotBefore(schedule.UpdatedAt);
        }

        // While one waits in the buffer, look again at the next poll: the open instance may have ended by then.
        schedule.SetDue(now.After(settings.PollInterval));
        await store.CompleteScheduleFireAsync(schedule, cancellationToken).ConfigureAwait(false);
    }

    private async Task ReleaseClaimsAsync(TimeSpan timeout)
    {
        using var deadline = new CancellationTokenSource(timeout, time);
        try
        {
            await store.ReleaseScheduleClaimsAsync(node.Id, deadline.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // The leases expire on their own; another node takes over then.
            LogReleaseFailed(logger, e);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Claiming due schedules failed; trying again after Schedules:ErrorBackoff")]
    private static partial void LogClaimFailed(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Firing schedule {ScheduleId} failed; it is decided again when its lease expires")]
    private static partial void LogFireFailed(ILogger logger, Guid scheduleId, Exception exception);

    [LoggerMessage(Level = LogLevel.Debug, Message = "Schedule {ScheduleId} occurrence {FireTime}: {Outcome} {InstanceId}")]
    private static partial void LogFired(ILogger logger, Guid scheduleId, DateTime fireTime, string outcome, Guid? instanceId);

    [LoggerMessage(Level = LogLevel.Debug, Message = "Handing back this node's schedule leases failed; they expire on their own")]
    private static partial void LogReleaseFailed(ILogger logger, Exception exception);
}
