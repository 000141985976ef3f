using System.Data.Common;
using System.Threading.Channels;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Storage;

namespace WorkflowService.Storage.Relational;

/// <summary>What a queued write runs: the writer's context, its prepared commands and the shared transaction.</summary>
internal delegate Task<T> GroupedWrite<T>(WorkflowDbContext db, SqlCommandCache commands, DbTransaction transaction, CancellationToken cancellationToken);

/// <summary>
/// Group commit where the database takes one writer at a time (SQLite). Hot-path writes queue here; one loop takes
/// whatever has queued (up to <see cref="MaxBatch"/>) and runs it in one transaction on the long-lived writer
/// connection, each write inside its own savepoint, so that one write's failure (a conflict, a lost lease, a duplicate
/// key) rolls back its own statements only. Under load many writes share one commit and nobody waits for a hand-over of
/// the writer gate; alone, a write commits at once. The queue is bounded: writers wait when it is full.
/// </summary>
internal sealed class GroupCommitWriter : IAsyncDisposable
{
    public const int MaxBatch = 64;
    private const int Capacity = 4096;

    private readonly Channel<Request> _queue = Channel.CreateBounded<Request>(
        new BoundedChannelOptions(Capacity) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
    private readonly WriterLane _lane;
    private readonly SqlDialect _dialect;
    private readonly SqlStatement _savepoint;
    private readonly SqlStatement _release;
    private readonly SqlStatement _rollbackTo;
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lazy<Task> _loop;

    public GroupCommitWriter(IDbContextFactory<WorkflowDbContext> contexts, SqlDialect dialect)
    {
        _lane = new WriterLane(contexts);
        _dialect = dialect;
        _savepoint = new SqlStatement(dialect).Sql("SAVEPOINT wf_write");
        _release = new SqlStatement(dialect).Sql("RELEASE wf_write");
        _rollbackTo = new SqlStatement(dialect).Sql("ROLLBACK TO wf_write");
        _loop = new Lazy<Task>(() => Task.Run(RunAsync), LazyThreadSafetyMode.ExecutionAndPublication);
    }

    /// <summary>Queues a write and waits for the commit that carries it; its own exception, or the commit's, is thrown here.</summary>
    public async Task<T> WriteAsync<T>(GroupedWrite<T> work, CancellationToken cancellationToken)
    {
        _ = _loop.Value;
        var request = new Request<T>(work, cancellationToken);
        await _queue.Writer.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        return await request.Result.ConfigureAwait(false);
    }

    private async Task RunAsync()
    {
        var stopping = _stopping.Token;
        var batch = new List<Request>(MaxBatch);
        try
        {
            while (await _queue.Reader.WaitToReadAsync(stopping).ConfigureAwait(false))
            {
                batch.Clear();
                while (batch.Count < MaxBatch && _queue.Reader.TryRead(out var request))
                {
                    if (request.CancellationToken.IsCancellationRequested)
                    {
                        request.Cancel();
                    }
                    else
                    {
                        batch.Add(request);
                    }
                }

                if (batch.Count > 0)
                {
                    await WriteBatchAsync(batch, stopping).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        finally
        {
            foreach (var request in batch)
            {
                request.Cancel();
            }

            while (_queue.Reader.TryRead(out var left))
            {
                left.Cancel();
            }
        }
    }

    private async Task WriteBatchAsync(List<Request> batch, CancellationToken stopping)
    {
        try
        {
            using var gate = await _dialect.EnterWriteAsync(stopping).ConfigureAwait(false);
            var (db, commands) = await _lane.EnterAsync(stopping).ConfigureAwait(false);
            var connection = db.Database.GetDbConnection();
            await using var transaction = await db.Database.BeginTransactionAsync(stopping).ConfigureAwait(false);
            var dbTransaction = transaction.GetDbTransaction();
            foreach (var request in batch)
            {
                await ExecuteAsync(connection, dbTransaction, commands, _savepoint, stopping).ConfigureAwait(false);
                try
                {
                    await request.RunAsync(db, commands, dbTransaction, stopping).ConfigureAwait(false);
                    await ExecuteAsync(connection, dbTransaction, commands, _release, stopping).ConfigureAwait(false);
                }
                catch (Exception e) when (e is not OperationCanceledException || !stopping.IsCancellationRequested)
                {
                    // This write's statements are undone; the others in the batch stand.
                    request.Failure = e;
                    await ExecuteAsync(connection, dbTransaction, commands, _rollbackTo, stopping).ConfigureAwait(false);
                    await ExecuteAsync(connection, dbTransaction, commands, _release, stopping).ConfigureAwait(false);
                }
            }

            await transaction.CommitAsync(stopping).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // The transaction (or the connection) failed: nothing of the batch was committed.
            await _lane.ResetAsync().ConfigureAwait(false);
            foreach (var request in batch)
            {
                request.Failure ??= e;
            }
        }

        foreach (var request in batch)
        {
            request.Finish();
        }
    }

    private static async Task ExecuteAsync(DbConnection connection, DbTransaction transaction, SqlCommandCache commands, SqlStatement statement,
        CancellationToken cancellationToken) =>
        await SqlExecution.ExecuteAsync(connection, transaction, [statement], commands, cancellationToken).ConfigureAwait(false);

    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        if (_loop.IsValueCreated)
        {
            try
            {
                await _loop.Value.WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                await _stopping.CancelAsync().ConfigureAwait(false);
            }
        }

        using (await _dialect.EnterWriteAsync(CancellationToken.None).ConfigureAwait(false))
        {
            await _lane.DisposeAsync().ConfigureAwait(false);
        }

        _stopping.Dispose();
    }

    private abstract class Request(CancellationToken cancellationToken)
    {
        public CancellationToken CancellationToken { get; } = cancellationToken;
        public Exception? Failure { get; set; }

        public abstract Task RunAsync(WorkflowDbContext db, SqlCommandCache commands, DbTransaction transaction, CancellationToken stopping);
        public abstract void Finish();
        public abstract void Cancel();
    }

    private sealed class Request<T>(GroupedWrite<T> work, CancellationToken cancellationToken) : Request(cancellationToken)
    {
        private readonly TaskCompletionSource<T> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private T? _value;

        public Task<T> Result => _result.Task;

        public override async Task RunAsync(WorkflowDbContext db, SqlCommandCache commands, DbTransaction transaction, CancellationToken stopping) =>
            _value = await work(db, commands, transaction, stopping).ConfigureAwait(false);

        public override void Finish()
        {
            if (Failure is null)
            {
                _result.TrySetResult(_value!);
            }
            else
            {
                _result.TrySetException(Failure);
            }
        }

        public override void Cancel() => _result.TrySetCanceled(CancellationToken.IsCancellationRequested ? CancellationToken : default);
    }
}
