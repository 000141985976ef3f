namespace WorkflowService.Engine.Persistence;

/// <summary>
/// An instant on the store's clock (<see cref="IStoreClock"/>): the one clock every due time, lease and timestamp the
/// engine writes is read from, so that nodes whose own clocks disagree still agree on when something is due. It keeps
/// microseconds: timestamps of the same millisecond still order as they were taken, and every SQL store reads back
/// exactly what it was given.
/// </summary>
public readonly record struct StoreInstant(DateTime UtcDateTime)
{
    /// <summary>The instant in Unix milliseconds (how due times are stored).</summary>
    public long UnixMs => (UtcDateTime.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerMillisecond;

    /// <summary>
    /// This instant, or <paramref name="earliest"/> if that is later. Each node reads the store's clock through an offset it
    /// measured itself, so two nodes may disagree by a few milliseconds: a commit dated this way is never dated before the
    /// one it follows (another node's), and an instance's history never runs backwards.
    /// </summary>
    public DateTime NotBefore(DateTime earliest) => UtcDateTime > earliest ? UtcDateTime : earliest;

    /// <summary>The instant <paramref name="delay"/> later, in Unix milliseconds (a due time).</summary>
    public long After(TimeSpan delay) => UnixMs + (long)delay.TotalMilliseconds;
}
