namespace WorkflowService.Engine.Schedules;

/// <summary>
/// Which of a schedule's occurrences are due at a moment, and which of them run under its catch-up policy: a pure
/// function of the calendar, the schedule's cursor and the store's clock, so every node that claims the schedule
/// decides the same.
/// </summary>
/// <param name="Run">The occurrences to act on now, oldest first (the overlap policy still decides each).</param>
/// <param name="Skipped">Due occurrences the catch-up policy drops, oldest first (a long gap counts as its first and last).</param>
/// <param name="SkippedUnseen">Whether occurrences before <see cref="Skipped"/> were dropped without being listed (a long downtime).</param>
/// <param name="NextFireMs">The first occurrence not handled by this plan; null when the calendar has ended.</param>
public sealed record OccurrencePlan(IReadOnlyList<long> Run, IReadOnlyList<long> Skipped, bool SkippedUnseen, long? NextFireMs)
{
    /// <summary>The plan for a schedule whose first unhandled occurrence is <paramref name="cursorMs"/>, at <paramref name="nowMs"/>.</summary>
    public static OccurrencePlan At(ScheduleCalendar calendar, long? cursorMs, long nowMs, ScheduleCatchUp policy, long? windowMs,
        ScheduleJitter jitter, CatchUpLimits limits)
    {
        ArgumentNullException.ThrowIfNull(calendar);
        ArgumentNullException.ThrowIfNull(limits);
        if (cursorMs is not { } cursor)
        {
            return new([], [], false, null);
        }

        // Occurrences older than the policy can use are dropped without reading them one by one.
        var lookBack = policy switch
        {
            ScheduleCatchUp.Skip => limits.LateAfterMs,
            ScheduleCatchUp.All => Math.Min(windowMs ?? limits.MaxCatchUpMs, limits.MaxCatchUpMs),
            _ => limits.MaxCatchUpMs,
        };
        var earliest = nowMs - lookBack - jitter.MaxMs;
        var unseen = false;
        long? next = cursor;
        if (cursor < earliest)
        {
            next = calendar.NextAfter(earliest - 1);
            unseen = true;
        }

        var due = new List<long>();
        // MaxRun + 1 tells the pass that more wait (a catch-up of All); one more than that is never needed.
        while (next is { } at && at + jitter.For(at) <= nowMs && (policy != ScheduleCatchUp.All || due.Count <= limits.MaxRun))
        {
            due.Add(at);
            next = calendar.NextAfter(at);
            if (policy == ScheduleCatchUp.Last && due.Count > 1)
            {
                // Only the newest missed one and those on time can run: keep the list short over a long gap.
                var late = due[^2];
                if (IsLate(late, nowMs, jitter, limits))
                {
                    due.RemoveAt(due.Count - 2);
                    unseen = true;
                }
            }
        }

        var run = new List<long>();
        var skipped = new List<long>();
        switch (policy)
        {
            case ScheduleCatchUp.All:
                if (due.Count > limits.MaxRun)
                {
                    // The rest run in the next pass: the cursor stays on the first of them.
                    next = due[limits.MaxRun];
                    due.RemoveRange(limits.MaxRun, due.Count - limits.MaxRun);
                }

                foreach (var at in due)
                {
                    (nowMs - at <= lookBack + jitter.For(at) ? run : skipped).Add(at);
                }

                break;
            case ScheduleCatchUp.Last:
                var onTime = due.Where(at => !IsLate(at, nowMs, jitter, limits)).ToList();
                var newestLate = due.LastOrDefault(at => IsLate(at, nowMs, jitter, limits), -1);
                if (onTime.Count == 0 && newestLate >= 0)
                {
                    run.Add(newestLate);
                }

                run.AddRange(onTime);
                skipped.AddRange(due.Where(at => !run.Contains(at)));
                break;
            default:
                foreach (var at in due)
                {
                    (IsLate(at, nowMs, jitter, limits) ? skipped : run).Add(at);
                }

                break;
        }

        return new(run, skipped, unseen, next);
    }

    private static bool IsLate(long at, long nowMs, ScheduleJitter jitter, CatchUpLimits limits) => nowMs - (at + jitter.For(at)) > limits.LateAfterMs;

}
