using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Persistence;
using WorkflowService.Providers.Storage;

namespace WorkflowService.UnitTests.Execution;

/// <summary>The store's clock: the instants it gives are the ones a store reads back.</summary>
public sealed class DatabaseClockTests
{
    [Fact]
    public void The_store_clock_reads_whole_microseconds_which_PostgreSQL_keeps_exactly()
    {
        // Found by the database-outage fault row: an instance row on PostgreSQL keeps microseconds, its history kept the
        // clock's tenths of a microsecond, and a node whose clock read behind dated its commit after the row's instant
        // but before the history's ("history event 2 is dated before event 1").
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 27, 22, 55, 58, TimeSpan.Zero).AddTicks(2_480_567));
        var clock = new DatabaseClock(time);

        var now = clock.Now().UtcDateTime;

        Assert.Equal(0, now.Ticks % TimeSpan.TicksPerMicrosecond);
        Assert.Equal(time.GetUtcNow().UtcDateTime.AddTicks(-7), now);
        Assert.Equal(DateTimeKind.Utc, now.Kind);
    }

    [Fact]
    public void A_node_whose_clock_reads_behind_dates_its_commit_no_earlier_than_the_history_it_follows()
    {
        var at = new DateTimeOffset(2026, 11, 27, 22, 55, 58, TimeSpan.Zero).AddTicks(2_480_567);
        var lastEvent = new DatabaseClock(new FakeTimeProvider(at)).Now().UtcDateTime;
        // The instance row as PostgreSQL gives it back to the other node: microseconds (the driver drops the rest).
        var rowReadBack = new DateTime(lastEvent.Ticks - (lastEvent.Ticks % TimeSpan.TicksPerMicrosecond), DateTimeKind.Utc);
        var behind = new DatabaseClock(new FakeTimeProvider(at.AddMilliseconds(-3)));

        var next = behind.Now().NotBefore(rowReadBack);

        Assert.True(next >= lastEvent, $"{next:O} is before {lastEvent:O}");
    }
}
