namespace WorkflowService.Engine.Schedules;

/// <summary>
/// The delay of each occurrence of a schedule, in [0, <see cref="MaxMs"/>): a hash of the schedule and the occurrence,
/// so every node computes the same delay and a retried pass fires at the same moment.
/// </summary>
public readonly record struct ScheduleJitter(Guid ScheduleId, long MaxMs)
{
    public static ScheduleJitter Of(Schedule schedule)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        return new(schedule.Id, schedule.JitterSeconds * 1000);
    }

    public long For(long fireMs)
    {
        if (MaxMs <= 0)
        {
            return 0;
        }

        Span<byte> id = stackalloc byte[16];
        ScheduleId.TryWriteBytes(id);
        var x = BitConverter.ToUInt64(id) ^ BitConverter.ToUInt64(id[8..]) ^ (ulong)fireMs;
        // SplitMix64's finaliser: every bit of the input moves every bit of the output.
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
        x ^= x >> 31;
        return (long)(x % (ulong)MaxMs);
    }
}
