using System.Diagnostics;
using System.Threading.Channels;

namespace WorkflowService.Providers.Storage;

/// <summary>A write queued for a store's group commit.</summary>
public interface IGroupedWrite
{
    /// <summary>The caller's token: a write whose caller gave up before a writer took it is left out.</summary>
    CancellationToken CancellationToken { get; }

    /// <summary>Ends the caller's wait without running the write (its caller gave up, or the store is stopping).</summary>
    void Cancel();
}

/// <summary>
/// The queue behind a store's group commit. Callers queue writes; each of a few writer loops takes whatever has queued, up
/// to a group's size and leaving out writes whose callers gave up, and hands it to the store as one group, so that under
/// load many writes share one transaction and nobody waits for a writer to be handed over; alone, a write is a group of
/// one at once. The queue is bounded (callers wait while it is full). The loops start with the first write and end when
/// the queue is disposed, ending the wait of every write they did not run.
/// </summary>
public sealed class WriteGroups<TWrite> : IAsyncDisposable where TWrite : IGroupedWrite
{
    private const int Capacity = 4096;

    /// <summary>How long disposal lets the writers finish what is queued before it cancels them.</summary>
    private static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(10);

    private readonly Channel<TWrite> _queue;
    private readonly int _maxGroup;
    private readonly Func<int, List<TWrite>, CancellationToken, Task> _writeGroup;
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lazy<Task> _loops;
    private int _disposed;

    /// <param name="writers">Writer loops, each writing one group at a time (1 where the database takes one writer at a time).</param>
    /// <param name="maxGroup">Most writes in one group.</param>
    /// <param name="writeGroup">
    /// Writes one group (never empty) as the loop numbered by its first argument (0 to <paramref name="writers"/> − 1, for
    /// state a loop keeps, such as its connection) and ends each write's wait; it must not throw.
    /// </param>
    public WriteGroups(int writers, int maxGroup, Func<int, List<TWrite>, CancellationToken, Task> writeGroup)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(writers, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxGroup, 1);
        _maxGroup = maxGroup;
        _writeGroup = writeGroup;
        _queue = Channel.CreateBounded<TWrite>(new BoundedChannelOptions(Capacity)
        {
            SingleReader = writers == 1,
            FullMode = BoundedChannelFullMode.Wait,
        });
        _loops = new Lazy<Task>(() => Task.WhenAll(Enumerable.Range(0, writers).Select(writer => Task.Run(() => RunAsync(writer)))),
            LazyThreadSafetyMode.ExecutionAndPublication);
    }

    /// <summary>Queues <paramref name="write"/> for the next group (waiting while the queue is full).</summary>
    public ValueTask QueueAsync(TWrite write, CancellationToken cancellationToken)
    {
        _ = _loops.Value;
        return _queue.Writer.WriteAsync(write, cancellationToken);
    }

    private async Task RunAsync(int writer)
    {
        // The loops are started by the first caller and live as long as the store: they belong to no caller's trace (a group
        // serves many), so their database spans and log lines must not claim that first caller's.
        Activity.Current = null;
        var stopping = _stopping.Token;
        var group = new List<TWrite>(_maxGroup);
        try
        {
            while (await _queue.Reader.WaitToReadAsync(stopping).ConfigureAwait(false))
            {
                group.Clear();
                while (group.Count < _maxGroup && _queue.Reader.TryRead(out var write))
                {
                    if (write.CancellationToken.IsCancellationRequested)
                    {
                        write.Cancel();
                    }
                    else
                    {
                        group.Add(write);
                    }
                }

                if (group.Count > 0)
                {
                    await _writeGroup(writer, group, stopping).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        finally
        {
            foreach (var write in group)
            {
                write.Cancel();
            }

            while (_queue.Reader.TryRead(out var left))
            {
                left.Cancel();
            }
        }
    }

    /// <summary>
    /// Takes no more writes; what is queued is still written, within <see cref="DrainTimeout"/>, then the writers are
    /// cancelled. Once: a store registered under several service types is disposed by the container once for each.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        _queue.Writer.TryComplete();
        if (_loops.IsValueCreated)
        {
            try
            {
                await _loops.Value.WaitAsync(DrainTimeout).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                await _stopping.CancelAsync().ConfigureAwait(false);
            }
        }

        _stopping.Dispose();
    }
}
