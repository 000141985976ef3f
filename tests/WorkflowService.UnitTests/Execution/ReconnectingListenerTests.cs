using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.UnitTests.Execution;

/// <summary>
/// The wake-up listeners' reconnect loop, on a fake clock: a listener that broke after a while is opened again at once,
/// and one that the server accepts and drops at once is not opened in a tight loop.
/// </summary>
public sealed class ReconnectingListenerTests
{
    private static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(30);

    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 26, 12, 0, 0, TimeSpan.Zero));

    [Fact]
    public async Task A_listener_that_breaks_as_soon_as_it_opens_is_opened_again_after_growing_pauses_not_in_a_tight_loop()
    {
        using var stopping = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        var opens = new List<DateTimeOffset>();
        var run = new ReconnectingListener("test", maxReconnects: 10, MaxBackoff, _time, NullLogger.Instance).RunAsync(async _ =>
            {
                lock (opens)
                {
                    opens.Add(_time.GetUtcNow());
                }

                // Opened, and broken at once (after the server's answer, as a real listener).
                await Task.Yield();
            }, down: null, stopping.Token);

        // The fake clock moves on in small steps until six passes were made; a pass can only come once its pause is over.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (Count(opens) < 6)
        {
            Assert.True(DateTime.UtcNow < deadline, $"only {Count(opens)} passes were made");
            _time.Advance(TimeSpan.FromMilliseconds(50));
            await Task.Delay(1, TestContext.Current.CancellationToken);
        }

        await stopping.CancelAsync();
        await run.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        List<TimeSpan> gaps;
        lock (opens)
        {
            gaps = opens.Zip(opens.Skip(1), (a, b) => b - a).Take(5).ToList();
        }

        // The first break reconnects at once; from the second in a row on, 200 ms, then doubling.
        Assert.True(gaps[1] >= TimeSpan.FromMilliseconds(200), $"second pause {gaps[1]}");
        Assert.True(gaps[2] >= TimeSpan.FromMilliseconds(400), $"third pause {gaps[2]}");
        Assert.True(gaps[3] >= TimeSpan.FromMilliseconds(800), $"fourth pause {gaps[3]}");
        Assert.True(gaps[4] >= TimeSpan.FromMilliseconds(1600), $"fifth pause {gaps[4]}");
    }

    [Fact]
    public async Task A_listener_that_lived_a_while_is_opened_again_at_once_when_it_breaks_however_long_the_longest_pause()
    {
        using var stopping = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        var opens = new List<DateTimeOffset>();
        var run = new ReconnectingListener("test", maxReconnects: 10, TimeSpan.FromMinutes(10), _time, NullLogger.Instance).RunAsync(async _ =>
            {
                await Task.Yield();
                lock (opens)
                {
                    opens.Add(_time.GetUtcNow());
                }

                // Each pass lives 20 s on the fake clock (past the quick-break bound, well inside the longest pause), then
                // breaks; the fifth is the last the test needs.
                _time.Advance(TimeSpan.FromSeconds(20));
                if (Count(opens) == 5)
                {
                    await stopping.CancelAsync();
                }
            }, down: null, stopping.Token);

        // Five passes with the clock never moved on by the test: none of them waited on a pause.
        await run.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        lock (opens)
        {
            // No pause between passes: each opened the moment the one before broke.
            Assert.All(opens.Zip(opens.Skip(1), (a, b) => b - a), gap => Assert.Equal(TimeSpan.FromSeconds(20), gap));
        }
    }

    [Theory]
    [InlineData(1, 200)]
    [InlineData(2, 400)]
    [InlineData(5, 3200)]
    [InlineData(20, 30_000)]
    [InlineData(1000, 30_000)]
    public void The_pause_after_quick_breaks_in_a_row_starts_at_200_ms_and_doubles_up_to_the_longest_pause(int inRow, int milliseconds) =>
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), ReconnectingListener.QuickBreakPause(inRow, MaxBackoff));

    private static int Count(List<DateTimeOffset> opens)
    {
        lock (opens)
        {
            return opens.Count;
        }
    }
}
