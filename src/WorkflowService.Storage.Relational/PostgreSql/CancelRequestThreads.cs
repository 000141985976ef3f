namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// Thread-pool threads kept at hand for Npgsql's cancel requests. Npgsql cancels a running command (its token cancelled:
/// a request's deadline, a health check's timeout; or its command timeout passed) by opening a second connection and
/// sending a PostgreSQL cancel request, synchronously, on the thread that cancels (npgsql/npgsql#3696). A server that does
/// not answer (paused, frozen, cut off) holds that thread until the connect timeout passes. Every command in flight then
/// does so at once; on two cores the pool starts with two threads and adds about one a second, so timers fire seconds
/// late and every request, deadline and health check waits behind them (the database-outage fault row, 3-7 s past
/// Api:RequestTimeout). At most one cancel request runs per connection: the pool's minimum is raised by the number of
/// connections, so a blocked cancel request never waits for a thread to be added.
/// </summary>
internal static class CancelRequestThreads
{
    private static readonly Lock Gate = new();
    private static int _reserved;

    /// <summary>Keeps <paramref name="connections"/> threads at hand (once per process: the largest number asked for).</summary>
    public static void Reserve(int connections)
    {
        lock (Gate)
        {
            if (connections <= _reserved)
            {
                return;
            }

            ThreadPool.GetMinThreads(out var workers, out var completionPorts);
            if (ThreadPool.SetMinThreads(workers + connections - _reserved, completionPorts))
            {
                _reserved = connections;
            }
        }
    }
}
