namespace WorkflowService.Engine.Persistence;

/// <summary>
/// An instant on the store's clock (<see cref="IStoreClock"/>): the one clock every due time, lease and timestamp the
/// engine writes is read from, so that nodes whose own clocks disagree still agree on when something is due. It keeps
/// the clock's full precision: timestamps of the same millisecond still order as they were taken.
/// </summary>
public readonly record struct StoreInstant(DateTime UtcDateTime)
{
    /// <summary>The instant in Unix milliseconds (how due times are stored).</summary>
    public long UnixMs => (UtcDateTime.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerMillisecond;

    /// <summary>The instant <paramref name="delay"/> later, in Unix milliseconds (a due time).</summary>
    public long After(TimeSpan delay) => UnixMs + (long)delay.TotalMilliseconds;
}
