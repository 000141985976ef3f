namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Waits for a condition, checking it every few milliseconds, until a deadline: the test asserts on the condition,
/// never on how long it took, and never sleeps a guessed amount of time.
/// </summary>
public static class Eventually
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(10);

    public static async Task WaitUntilAsync(Func<Task<bool>> condition, TimeSpan? deadline = null, string? what = null)
    {
        var limit = deadline ?? TimeSpan.FromSeconds(60);
        var until = DateTime.UtcNow + limit;
        using var timer = new PeriodicTimer(Interval);
        while (!await condition())
        {
            Assert.True(DateTime.UtcNow < until, $"{what ?? "condition"} not met within {limit.TotalSeconds} s");
            await timer.WaitForNextTickAsync();
        }
    }

    public static Task WaitUntilAsync(Func<bool> condition, TimeSpan? deadline = null, string? what = null) =>
        WaitUntilAsync(() => Task.FromResult(condition()), deadline, what);
}
