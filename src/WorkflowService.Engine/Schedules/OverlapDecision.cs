namespace WorkflowService.Engine.Schedules;

/// <summary>
/// What a pass does with the occurrences its catch-up plan runs, given whether the instance the schedule started last
/// is still open: a pure function, so the pass only carries it out.
/// </summary>
/// <param name="Start">The occurrences to start, oldest first.</param>
/// <param name="CancelPrevious">Whether the open instance is cancelled first.</param>
/// <param name="Buffered">The occurrence held back until the open instance ends (<see cref="ScheduleOverlap.BufferOne"/>).</param>
/// <param name="Skipped">The occurrences dropped because of the overlap.</param>
public sealed record OverlapDecision(IReadOnlyList<long> Start, bool CancelPrevious, long? Buffered, IReadOnlyList<long> Skipped)
{
    /// <param name="previousOpen">Whether the instance the schedule started last is still open.</param>
    /// <param name="buffered">The occurrence an earlier pass held back, if any.</param>
    /// <param name="due">The occurrences the catch-up plan runs now, oldest first.</param>
    public static OverlapDecision For(ScheduleOverlap policy, bool previousOpen, long? buffered, IReadOnlyList<long> due)
    {
        ArgumentNullException.ThrowIfNull(due);
        var waiting = buffered is { } b ? [b, .. due] : due.ToList();
        switch (policy)
        {
            case ScheduleOverlap.AllowAll:
                return new(waiting, false, null, []);
            case ScheduleOverlap.CancelPrevious:
                // Only the newest starts: the ones before it would be cancelled by it at once.
                return waiting.Count == 0
                    ? new([], false, null, [])
                    : new([waiting[^1]], previousOpen, null, waiting[..^1]);
            case ScheduleOverlap.BufferOne:
                if (previousOpen)
                {
                    return waiting.Count == 0 ? new([], false, null, []) : new([], false, waiting[0], waiting[1..]);
                }

                // The first starts; the next waits for it; the rest would overlap both.
                return waiting.Count switch
                {
                    0 => new([], false, null, []),
                    1 => new([waiting[0]], false, null, []),
                    _ => new([waiting[0]], false, waiting[1], waiting[2..]),
                };
            default:
                return previousOpen || waiting.Count == 0
                    ? new([], false, null, waiting)
                    : new([waiting[0]], false, null, waiting[1..]);
        }
    }
}
