using System.Globalization;
using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Holds the instances schedules started (read from the store) to their calendars: schedules that fire every whole second
/// from <c>from</c>, checked up to <c>to</c>. Every occurrence started exactly once, none for a time no calendar has, none
/// early (created before its time on the store's clock, beyond <see cref="ClockSkewScenario.Tolerance"/>), and each within
/// <c>onTime</c> of its time, or within <c>afterFault</c> where it fell due from just before a fault to a lease after
/// it (a killed or frozen node's lease on the schedule must expire first). Pure: no I/O, unit-tested.
/// </summary>
internal static class OccurrenceCheck
{
    private const int MaxExamples = 3;

    public static OccurrenceVerdict Check(IReadOnlyList<Guid> schedules, DateTimeOffset from, DateTimeOffset to, IReadOnlyList<ScheduledStart> starts,
        IReadOnlyList<(DateTimeOffset From, DateTimeOffset To)> faults, TimeSpan onTime, TimeSpan afterFault)
    {
        var lease = afterFault - onTime;
        var expected = schedules.SelectMany(s => Seconds(from, to).Select(ms => (s, ms))).ToHashSet();
        var byOccurrence = starts.GroupBy(s => (s.ScheduleId, s.FireMs)).ToList();
        var failures = new List<string>();

        var started = byOccurrence.Select(g => g.Key).ToHashSet();
        var missing = expected.Where(o => !started.Contains(o)).OrderBy(o => o.ms).ToList();
        Report(failures, missing, "occurrences never started", o => $"schedule {o.s} at {Time(o.ms)}");
        Report(failures, byOccurrence.Where(g => g.Count() > 1).ToList(), "occurrences started more than once",
            g => $"schedule {g.Key.ScheduleId} at {Time(g.Key.FireMs)}: instances {string.Join(", ", g.Select(s => s.InstanceId))}");
        Report(failures, byOccurrence.Where(g => !expected.Contains(g.Key)).ToList(), "instances started for a time no calendar has",
            g => $"schedule {g.Key.ScheduleId} at {Time(g.Key.FireMs)}");
        Report(failures, starts.Where(s => s.Delay < -ClockSkewScenario.Tolerance).ToList(), "occurrences started early",
            s => $"instance {s.InstanceId} {-s.Delay.TotalMilliseconds:0} ms before {Time(s.FireMs)}");

        bool AfterFault(ScheduledStart s) => faults.Any(f => s.FireMs >= (f.From - onTime).ToUnixTimeMilliseconds() && s.FireMs <= (f.To + lease).ToUnixTimeMilliseconds());
        Report(failures, starts.Where(s => !AfterFault(s) && s.Delay > onTime).ToList(), $"occurrences started more than {onTime.TotalSeconds:0.#} s late",
            s => $"instance {s.InstanceId} {s.Delay.TotalSeconds:0.000} s after {Time(s.FireMs)}");
        Report(failures, starts.Where(s => AfterFault(s) && s.Delay > afterFault).ToList(), $"occurrences due near a fault started more than {afterFault.TotalSeconds:0.#} s late",
            s => $"instance {s.InstanceId} {s.Delay.TotalSeconds:0.000} s after {Time(s.FireMs)}");

        var delays = starts.Select(s => s.Delay.TotalMilliseconds).Order().ToList();
        var nearFault = starts.Where(AfterFault).Select(s => s.Delay.TotalMilliseconds).DefaultIfEmpty(0).Max();
        var summary = delays.Count == 0
            ? $"no occurrence started of {expected.Count:N0} due"
            : string.Create(CultureInfo.InvariantCulture,
                $"{byOccurrence.Count:N0} of {expected.Count:N0} occurrences due from {from:HH:mm:ss} to {to:HH:mm:ss} started, {starts.Count:N0} instances; delay after their time (store clock) p50 {delays[delays.Count / 2]:0} ms, p99 {delays[Math.Max(0, (int)Math.Ceiling(delays.Count * 0.99) - 1)]:0} ms, max {delays[^1]:0} ms; {starts.Count(AfterFault):N0} due near a fault, max {nearFault:0} ms (bounds {onTime.TotalSeconds:0.#} s, near a fault {afterFault.TotalSeconds:0.#} s)");
        return new OccurrenceVerdict(failures, summary);
    }

    private static IEnumerable<long> Seconds(DateTimeOffset from, DateTimeOffset to)
    {
        for (var s = from.ToUnixTimeSeconds(); s < to.ToUnixTimeSeconds(); s++)
        {
            yield return s * 1000;
        }
    }

    private static void Report<T>(List<string> failures, IReadOnlyList<T> found, string what, Func<T, string> example)
    {
        if (found.Count > 0)
        {
            failures.Add($"{found.Count} {what}, e.g. {string.Join("; ", found.Take(MaxExamples).Select(example))}");
        }
    }

    private static string Time(long ms) => DateTimeOffset.FromUnixTimeMilliseconds(ms).ToString("HH:mm:ss.fff", CultureInfo.InvariantCulture);
}
