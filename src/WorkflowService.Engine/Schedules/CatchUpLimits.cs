namespace WorkflowService.Engine.Schedules;

/// <summary>What one pass over a schedule may do at once (from <see cref="ScheduleOptions"/>).</summary>
/// <param name="LateAfterMs">An occurrence later than this after its time (and jitter) is missed.</param>
/// <param name="MaxCatchUpMs">The furthest back a pass looks for missed occurrences, whatever the policy.</param>
/// <param name="MaxRun">The most occurrences one pass runs; the rest wait for the next pass.</param>
public sealed record CatchUpLimits(long LateAfterMs, long MaxCatchUpMs, int MaxRun);
