using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>Reads the service's connections to the run's database every 250 ms while a fault runs, keeping the highest.</summary>
internal sealed class ConnectionSampler : IAsyncDisposable
{
    private static readonly TimeSpan Every = TimeSpan.FromMilliseconds(250);

    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private int? _max;

    public ConnectionSampler(Backend backend) => _sampling = SampleAsync(backend, _stop.Token);

    /// <summary>The most connections seen; null where the backend has none to count (SQLite).</summary>
    public int? Max => _max;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _sampling;
        _stop.Dispose();
    }

    private async Task SampleAsync(Backend backend, CancellationToken stop)
    {
        try
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    if (await backend.ReadConnectionsAsync(stop) is not { } now)
                    {
                        return;
                    }

                    _max = Math.Max(_max ?? 0, now);
                }
                catch (Exception e) when (e is System.Data.Common.DbException or MongoDB.Driver.MongoException or TimeoutException)
                {
                    // The database is down (a fault row stops it on purpose): nothing to count until it is back.
                }

                await Task.Delay(Every, stop);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // Stopped with the row.
        }
    }
}
