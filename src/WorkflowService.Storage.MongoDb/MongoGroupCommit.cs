using System.Diagnostics.CodeAnalysis;
using WorkflowService.Engine.Persistence;
using WorkflowService.Providers.Storage;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Group commit for wait points. Callers queue their wait point here; each writer loop takes whatever has queued (up to
/// Store:GroupCommitMaxBatch) and commits it in one multi-document transaction, so that under load many wait points share
/// the round trips and the one majority-acknowledged commit that each would otherwise pay alone; alone, a wait point
/// commits at once, in a transaction of its own.
/// </summary>
/// <remarks>
/// MongoDB has no savepoints: a failed write aborts the whole transaction. So a group goes in only when every wait point
/// of it would: one that is stale (its instance moved on), lost its lease or repeats a unique key makes the group's
/// transaction abort before its commit (<see cref="GroupNotAppliedException"/>), and each wait point of the group is
/// then committed alone, in its own transaction, where it meets its own outcome; so does any failure one wait point may
/// have brought (a document too large), and a group still conflicting with other writers after its retries. Rare under a
/// normal load: a conflict means two writers raced for the same instance. The store out of reach, or a commit whose
/// outcome stays unknown, is every caller's of the group, as it would have been each one's alone.
/// </remarks>
internal sealed class MongoGroupCommit : IAsyncDisposable
{
    private readonly WriteGroups<Request> _groups;
    private readonly Func<IReadOnlyList<WaitPointCommit>, CancellationToken, Task> _commitGroup;
    private readonly Func<WaitPointCommit, CancellationToken, Task> _commitOne;

    /// <param name="commitGroup">Commits several wait points in one transaction, or throws <see cref="GroupNotAppliedException"/> having written nothing.</param>
    /// <param name="commitOne">Commits one wait point in a transaction of its own, with its own exceptions.</param>
    public MongoGroupCommit(int writers, int maxBatch, Func<IReadOnlyList<WaitPointCommit>, CancellationToken, Task> commitGroup,
        Func<WaitPointCommit, CancellationToken, Task> commitOne)
    {
        _commitGroup = commitGroup;
        _commitOne = commitOne;
        _groups = new WriteGroups<Request>(writers, maxBatch, (_, group, stopping) =>
            group.Count == 1 ? CommitAloneAsync(group[0], stopping) : CommitGroupAsync(group, stopping));
    }

    /// <summary>
    /// Queues a wait point and waits for the commit that carries it; its own exception, or the group's, is thrown here. A
    /// caller that gives up stops waiting; its wait point, if already in a group, may still commit, like any write whose
    /// answer is lost.
    /// </summary>
    public async Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        var request = new Request(commit, cancellationToken);
        await _groups.QueueAsync(request, cancellationToken).ConfigureAwait(false);
        await request.Done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Any failure of the group's transaction is handed to each waiting caller, which rethrows it; only the writer loop survives it.")]
    private async Task CommitGroupAsync(List<Request> group, CancellationToken stopping)
    {
        try
        {
            await _commitGroup(group.ConvertAll(r => r.Commit), stopping).ConfigureAwait(false);
        }
        catch (GroupNotAppliedException)
        {
            // Nothing of the group was written: each wait point alone, each to its own outcome, in the order they came (two
            // wait points of one instance, the usual cause, then meet as a stale read, not as a write conflict, and the
            // group takes one connection, not one each).
            foreach (var request in group)
            {
                await CommitAloneAsync(request, stopping).ConfigureAwait(false);
            }

            return;
        }
        catch (Exception e)
        {
            foreach (var request in group)
            {
                request.Fail(e);
            }

            return;
        }

        foreach (var request in group)
        {
            request.Succeed();
        }
    }

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "The wait point's own failure is handed to its caller, which rethrows it.")]
    private async Task CommitAloneAsync(Request request, CancellationToken stopping)
    {
        try
        {
            await _commitOne(request.Commit, stopping).ConfigureAwait(false);
            request.Succeed();
        }
        catch (Exception e)
        {
            request.Fail(e);
        }
    }

    /// <summary>Commits what is queued (within a bound: a transaction takes at most its commit timeout), then stops the writers.</summary>
    public ValueTask DisposeAsync() => _groups.DisposeAsync();

    private sealed class Request(WaitPointCommit commit, CancellationToken cancellationToken) : IGroupedWrite
    {
        public WaitPointCommit Commit { get; } = commit;

        public CancellationToken CancellationToken { get; } = cancellationToken;

        public TaskCompletionSource Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Succeed() => Done.TrySetResult();

        public void Fail(Exception e) => Done.TrySetException(e);

        public void Cancel() => Done.TrySetCanceled(CancellationToken.IsCancellationRequested ? CancellationToken : default);
    }
}
