using WorkflowService.Engine.Persistence;

namespace WorkflowService.Providers.Storage;

/// <summary>
/// A store's clock: this process's clock corrected by its distance to the database server's, measured at start-up, so
/// that every node agrees on when a signal is due. Until it is measured (or where the database cannot tell its time) it is
/// this process's clock.
/// </summary>
public sealed class DatabaseClock(TimeProvider time)
{
    private const int Readings = 5;

    private long _offsetMs;

    public long NowMs() => time.GetUtcNow().ToUnixTimeMilliseconds() + Interlocked.Read(ref _offsetMs);

    /// <summary>
    /// Now, in whole microseconds: the finest instant PostgreSQL keeps (the driver drops the rest). A run dates its commit no
    /// earlier than the instance's last one as read back from the store; had the last commit's history kept the tenths of
    /// a microsecond its row dropped, a node whose clock reads a little behind dated the next event up to a microsecond
    /// before it (the database-outage fault row: "history event 2 is dated before event 1").
    /// </summary>
    public StoreInstant Now()
    {
        var ticks = time.GetUtcNow().UtcDateTime.AddMilliseconds(Interlocked.Read(ref _offsetMs)).Ticks;
        return new(new DateTime(ticks - (ticks % TimeSpan.TicksPerMicrosecond), DateTimeKind.Utc));
    }

    /// <summary>
    /// Measures the server's clock against this node's the way NTP does it: of a few readings, the one with the shortest
    /// round trip (the first pays for preparing the call), its midpoint taken as the moment the server read its clock. So
    /// the store's clock agrees with the server's to within half a round trip and a millisecond.
    /// </summary>
    /// <param name="readServerMs">The server's clock in Unix milliseconds, or null when it cannot tell (the offset then stays).</param>
    public async Task MeasureAsync(Func<CancellationToken, Task<long?>> readServerMs, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(readServerMs);
        long? offset = null;
        var shortest = long.MaxValue;
        for (var reading = 0; reading < Readings; reading++)
        {
            var before = time.GetTimestamp();
            var server = await readServerMs(cancellationToken).ConfigureAwait(false);
            var after = time.GetTimestamp();
            if (server is not { } serverMs)
            {
                break;
            }

            if (after - before < shortest)
            {
                shortest = after - before;
                var midpoint = time.GetUtcNow() - (time.GetElapsedTime(before, after) / 2) - time.GetElapsedTime(after);
                offset = serverMs - midpoint.ToUnixTimeMilliseconds();
            }
        }

        if (offset is { } ms)
        {
            Interlocked.Exchange(ref _offsetMs, ms);
        }
    }
}
