using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// Thread-pool threads for Npgsql's cancel requests, added only while they are needed. Npgsql cancels a running command
/// (its token cancelled: a request's deadline, a health check's timeout; or its command timeout passed) by opening a second
/// connection and sending a PostgreSQL cancel request, synchronously, on the thread that cancels (npgsql/npgsql#3696). A
/// server that does not answer (paused, frozen, cut off) holds that thread until the connect timeout passes. Every command
/// in flight then does so at once; on two cores the pool has a few threads and adds about one a second, so timers fire
/// seconds late and every request, deadline and health check waits behind them (the database-outage fault row).
/// <para>
/// Keeping those threads at hand all the time cost 5 % of sustained throughput (a larger pool, more switching). So a
/// watcher on a thread of its own looks at the pool a few times a second. When work is queued and none completes, it
/// raises the pool's minimum by the number of connections a command can be cancelled on (at most one cancel request runs
/// per connection), so the pool adds them at once. It puts the minimum back once the pool has moved freely for a while.
/// </para>
/// </summary>
internal sealed partial class CancelRequestThreads(int connections, ILogger<CancelRequestThreads> logger) : IHostedService
{
    /// <summary>How often the watcher looks at the pool.</summary>
    internal static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(200);

    /// <summary>How long the pool must move freely before the minimum goes back.</summary>
    internal static readonly TimeSpan Calm = TimeSpan.FromSeconds(30);

    // Nothing here needs disposing: a host may stop the service after its container has disposed what it owns.
    private readonly object _gate = new(); // a Monitor, for Wait and PulseAll
    private bool _stopping;
    private Thread? _thread;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        lock (_gate)
        {
            if (_thread is null && !_stopping)
            {
                _thread = new Thread(Watch) { IsBackground = true, Name = "Npgsql cancel-request threads" };
                _thread.Start();
            }
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        Thread? thread;
        lock (_gate)
        {
            _stopping = true;
            Monitor.PulseAll(_gate);
            thread = _thread;
        }

        thread?.Join(Interval * 5);
        return Task.CompletedTask;
    }

    /// <summary>Waits one interval; false once the service is stopping.</summary>
    private bool NextSample()
    {
        lock (_gate)
        {
            return !_stopping && !Monitor.Wait(_gate, Interval) && !_stopping;
        }
    }

    private void Watch()
    {
        var watch = new PoolStarvationWatch(Interval, Calm);
        int? lowered = null;
        while (NextSample())
        {
            switch (watch.Observe(ThreadPool.PendingWorkItemCount, ThreadPool.CompletedWorkItemCount))
            {
                case PoolStarvationWatch.Action.Raise:
                    ThreadPool.GetMinThreads(out var workers, out var completionPorts);
                    lowered = workers;
                    ThreadPool.SetMinThreads(Math.Max(workers, ThreadPool.ThreadCount) + connections, completionPorts);
                    LogRaised(logger, ThreadPool.PendingWorkItemCount, ThreadPool.ThreadCount, connections);
                    break;
                case PoolStarvationWatch.Action.Lower when lowered is { } minimum:
                    ThreadPool.GetMinThreads(out _, out var ports);
                    ThreadPool.SetMinThreads(minimum, ports);
                    lowered = null;
                    LogLowered(logger, minimum);
                    break;
            }
        }

        if (lowered is { } restore)
        {
            ThreadPool.GetMinThreads(out _, out var ports);
            ThreadPool.SetMinThreads(restore, ports);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "The thread pool stopped moving ({Pending} items queued, {Threads} threads): keeping {Connections} more threads for the database's cancel requests")]
    private static partial void LogRaised(ILogger logger, long pending, int threads, int connections);

    [LoggerMessage(Level = LogLevel.Information, Message = "The thread pool moves freely again: its minimum is back at {Minimum} threads")]
    private static partial void LogLowered(ILogger logger, int minimum);
}

/// <summary>
/// Tells from samples of the thread pool when it is starved (work queued at a sample and none completed since the one
/// before) and when it has moved freely for <c>calm</c> since it was last starved.
/// </summary>
internal sealed class PoolStarvationWatch(TimeSpan interval, TimeSpan calm)
{
    internal enum Action
    {
        None,
        Raise,
        Lower,
    }

    private readonly int _calmSamples = Math.Max(1, (int)Math.Ceiling(calm / interval));
    private long? _completed;
    private bool _raised;
    private int _freeSamples;

    public Action Observe(long pending, long completed)
    {
        var starved = pending > 0 && completed == _completed;
        _completed = completed;
        if (starved)
        {
            _freeSamples = 0;
            if (_raised)
            {
                return Action.None;
            }

            _raised = true;
            return Action.Raise;
        }

        if (_raised && ++_freeSamples >= _calmSamples)
        {
            _raised = false;
            _freeSamples = 0;
            return Action.Lower;
        }

        return Action.None;
    }
}
