using System.Diagnostics;
using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>Waits for a fault run's backlog to drain, reading the store (never the service, which may be the thing at fault).</summary>
internal static class Drain
{
    private static readonly TimeSpan ReadEvery = TimeSpan.FromMilliseconds(200);

    /// <summary>
    /// Waits until at least <paramref name="expected"/> instances are Completed, at most <paramref name="deadline"/>;
    /// returns how long after <paramref name="since"/> (a stopwatch timestamp: the last fault) that was, or null if never.
    /// </summary>
    public static async Task<TimeSpan?> UntilCompletedAsync(Backend backend, int expected, long since, TimeSpan deadline, CancellationToken cancellationToken)
    {
        await using var store = await backend.OpenStoreReaderAsync(cancellationToken);
        var waited = Stopwatch.StartNew();
        while (true)
        {
            var counts = await store.CountByStatusAsync(cancellationToken);
            if (counts.GetValueOrDefault("Completed") >= expected)
            {
                return Stopwatch.GetElapsedTime(since);
            }

            if (waited.Elapsed > deadline)
            {
                return null;
            }

            await Task.Delay(ReadEvery, cancellationToken);
        }
    }

    /// <summary>
    /// Waits, at most a minute, until <paramref name="count"/> instances are Faulted with at least as many signals
    /// dead-lettered (poison signals that failed every attempt); false if they never were.
    /// </summary>
    public static async Task<bool> UntilFaultedAsync(Backend backend, int count, CancellationToken cancellationToken)
    {
        await using var store = await backend.OpenStoreReaderAsync(cancellationToken);
        var waited = Stopwatch.StartNew();
        while (waited.Elapsed < TimeSpan.FromMinutes(1))
        {
            var snapshot = await store.CountByStatusAsync(cancellationToken);
            if (snapshot.GetValueOrDefault("Faulted") >= count && await store.CountSignalsAsync("DeadLettered", cancellationToken) >= count)
            {
                return true;
            }

            await Task.Delay(ReadEvery, cancellationToken);
        }

        return false;
    }
}
