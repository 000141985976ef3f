using System.Diagnostics;
using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using Microsoft.EntityFrameworkCore.Storage;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Providers.Storage;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// What a queued write runs: the writer's context, its prepared commands (where the writer keeps them), the shared
/// transaction, and a savepoint statement the write must send first, in the same round trip as its own statements (where
/// the writer asks for that; null when the writer sets the savepoint itself).
/// </summary>
internal delegate Task<T> GroupedWrite<T>(WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction, SqlStatement? savepoint,
    CancellationToken cancellationToken);

/// <summary>How a <see cref="GroupCommitWriter"/> works for one database.</summary>
/// <param name="Writers">Writer loops, each on its own connection (1 where the database takes one writer at a time).</param>
/// <param name="MaxBatch">Most writes in one transaction.</param>
/// <param name="SavepointInBatch">
/// Each write sends its savepoint with its own statements, in one round trip, and no savepoint is released (a server
/// database, where every statement is a round trip; keep <paramref name="MaxBatch"/> under the server's limit of cached
/// subtransactions, 64 on PostgreSQL).
/// </param>
/// <param name="PrepareCommands">Keep each statement prepared on the writer's connection (SQLite: prepared in process).</param>
internal sealed record GroupCommitOptions(int Writers, int MaxBatch, bool SavepointInBatch, bool PrepareCommands)
{
    /// <summary>SQLite: one writer, statements prepared once, savepoints set and released by the writer.</summary>
    public static readonly GroupCommitOptions SingleWriter = new(1, 64, SavepointInBatch: false, PrepareCommands: true);

    /// <summary>A server database: a few writer connections, each write one round trip with its savepoint.</summary>
    public static readonly GroupCommitOptions Server = new(4, 32, SavepointInBatch: true, PrepareCommands: false);
}

/// <summary>
/// Group commit. Hot-path writes queue here; each writer loop takes whatever has queued (up to
/// <see cref="GroupCommitOptions.MaxBatch"/>) and runs it in one transaction on its long-lived connection, each write
/// inside its own savepoint, so that one write's failure (a conflict, a lost lease, a duplicate key) rolls back its own
/// statements only. Under load many writes share one commit (one WAL flush) and nobody waits for a hand-over of a writer
/// gate; alone, a write commits at once. The queue is bounded: writers wait when it is full.
/// </summary>
internal sealed class GroupCommitWriter : IAsyncDisposable
{
    private readonly WriteGroups<Request> _groups;
    private readonly WriterLane[] _lanes;
    private readonly GroupCommitOptions _options;
    private readonly SqlDialect _dialect;
    private readonly SqlStatement _savepoint;
    private readonly SqlStatement _release;
    private readonly SqlStatement _rollbackTo;

    public GroupCommitWriter(IDbContextFactory<WorkflowDbContext> contexts, SqlDialect dialect, GroupCommitOptions options)
    {
        _options = options;
        _lanes = Enumerable.Range(0, options.Writers).Select(_ => new WriterLane(contexts)).ToArray();
        _groups = new WriteGroups<Request>(options.Writers, options.MaxBatch, (lane, batch, stopping) => WriteBatchAsync(_lanes[lane], batch, stopping));
        _dialect = dialect;
        _savepoint = new SqlStatement(dialect).Sql("SAVEPOINT wf_write");
        _release = new SqlStatement(dialect).Sql("RELEASE wf_write");
        _rollbackTo = new SqlStatement(dialect).Sql("ROLLBACK TO wf_write");
    }

    /// <summary>
    /// Queues a write and waits for the commit that carries it; its own exception, or the commit's, is thrown here. A
    /// caller that gives up (its request timed out) stops waiting; its write, if already in a batch, may still commit,
    /// like any write whose answer is lost, which its idempotency key makes safe to repeat.
    /// </summary>
    public async Task<T> WriteAsync<T>(GroupedWrite<T> work, CancellationToken cancellationToken)
    {
        var request = new Request<T>(work, cancellationToken);
        await _groups.QueueAsync(request, cancellationToken).ConfigureAwait(false);
        return await request.Result.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>How many times a batch is run again after a transient failure before its commit was sent.</summary>
    private const int TransientRetries = 2;

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Any failure of the batch's transaction is handed to each waiting request, which rethrows it to its caller; only the writer loop survives it.")]
    private async Task WriteBatchAsync(WriterLane lane, List<Request> batch, CancellationToken stopping)
    {
        var committed = 0;
        for (var attempt = 0; ; attempt++)
        {
            var committing = false;
            try
            {
                foreach (var request in batch)
                {
                    request.Failure = null;
                }

                using var gate = await _dialect.EnterWriteAsync(stopping).ConfigureAwait(false);
                var (db, cache) = await lane.EnterAsync(stopping).ConfigureAwait(false);
                var commands = _options.PrepareCommands ? cache : null;
                var connection = db.Database.GetDbConnection();
                await using var transaction = await db.Database.BeginTransactionAsync(stopping).ConfigureAwait(false);
                var dbTransaction = transaction.GetDbTransaction();
                foreach (var request in batch)
                {
                    await WriteOneAsync(request, db, commands, dbTransaction, stopping).ConfigureAwait(false);
                }

                committing = true;
                await transaction.CommitAsync(stopping).ConfigureAwait(false);
                // The writes that committed: one rolled back to its savepoint failed alone and is not among them.
                committed = batch.Count(request => request.Failure is null);
                StoreTelemetry.GroupCommitted(committed);
                break;
            }
            catch (Exception e)
            {
                // The transaction (or the connection) failed: nothing of the batch was committed, unless the commit itself
                // was under way, whose outcome is unknown. Only a transient failure before the commit is run again.
                await lane.ResetAsync().ConfigureAwait(false);
                if (!committing && attempt < TransientRetries && _dialect.IsTransient(e) && !stopping.IsCancellationRequested)
                {
                    continue;
                }

                foreach (var request in batch)
                {
                    request.Failure ??= e;
                }

                break;
            }
        }

        foreach (var request in batch)
        {
            request.Finish(committed);
        }
    }

    /// <summary>
    /// Whether a write's failure can be undone by rolling back to its savepoint alone. Where the savepoint travels with the
    /// write's statements, that is only certain for a failure the server reported or a check made after the statements
    /// ran (a lost version or lease): anything else might have struck before the savepoint, and then fails the batch.
    /// </summary>
    private bool UndoesItsOwnStatements(Exception e, CancellationToken stopping)
    {
        if (_dialect.IsTransient(e) || (e is OperationCanceledException && stopping.IsCancellationRequested))
        {
            return false;
        }

        return !_options.SavepointInBatch || e is DbException || e is Engine.Persistence.ConcurrencyConflictException
            || e is Engine.Persistence.LeaseLostException;
    }

    /// <summary>Runs one write inside its own savepoint; its failure undoes its statements and is kept for its caller.</summary>
    private async Task WriteOneAsync(Request request, WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction,
        CancellationToken stopping)
    {
        var connection = db.Database.GetDbConnection();
        if (!_options.SavepointInBatch)
        {
            await ExecuteAsync(connection, transaction, commands, _savepoint, stopping).ConfigureAwait(false);
        }

        try
        {
            await request.RunAsync(db, commands, transaction, _options.SavepointInBatch ? _savepoint : null, stopping).ConfigureAwait(false);
            if (!_options.SavepointInBatch)
            {
                await ExecuteAsync(connection, transaction, commands, _release, stopping).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (UndoesItsOwnStatements(e, stopping))
        {
            // This write's statements are undone; the others in the batch stand.
            request.Failure = e;
            await ExecuteAsync(connection, transaction, commands, _rollbackTo, stopping).ConfigureAwait(false);
            if (!_options.SavepointInBatch)
            {
                await ExecuteAsync(connection, transaction, commands, _release, stopping).ConfigureAwait(false);
            }
        }
    }

    private static async Task ExecuteAsync(DbConnection connection, DbTransaction transaction, SqlCommandCache? commands, SqlStatement statement,
        CancellationToken cancellationToken) =>
        await SqlExecution.ExecuteAsync(connection, transaction, [statement], commands, cancellationToken).ConfigureAwait(false);

    public async ValueTask DisposeAsync()
    {
        // The writers finish what is queued (within a bound) before their connections go.
        await _groups.DisposeAsync().ConfigureAwait(false);
        using (await _dialect.EnterWriteAsync(CancellationToken.None).ConfigureAwait(false))
        {
            foreach (var lane in _lanes)
            {
                await lane.DisposeAsync().ConfigureAwait(false);
            }
        }

    }

    private abstract class Request(CancellationToken cancellationToken) : IGroupedWrite
    {
        public CancellationToken CancellationToken { get; } = cancellationToken;
        public Exception? Failure { get; set; }

        /// <summary>The caller's engine span (its commit's), told the size of the group that carried the write.</summary>
        protected Activity? Span { get; } = StoreTelemetry.CommitSpan();

        public abstract Task RunAsync(WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction, SqlStatement? savepoint,
            CancellationToken stopping);
        public abstract void Finish(int groupSize);
        public abstract void Cancel();
    }

    private sealed class Request<T>(GroupedWrite<T> work, CancellationToken cancellationToken) : Request(cancellationToken)
    {
        private readonly TaskCompletionSource<T> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private T? _value;

        public Task<T> Result => _result.Task;

        public override async Task RunAsync(WorkflowDbContext db, SqlCommandCache? commands, DbTransaction transaction, SqlStatement? savepoint,
            CancellationToken stopping) =>
            _value = await work(db, commands, transaction, savepoint, stopping).ConfigureAwait(false);

        public override void Finish(int groupSize)
        {
            if (Failure is null)
            {
                // A caller that gave up (its token) may have ended its span already.
                if (!CancellationToken.IsCancellationRequested)
                {
                    StoreTelemetry.CommittedIn(Span, groupSize);
                }

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
