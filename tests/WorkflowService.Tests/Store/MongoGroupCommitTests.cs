using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.MongoDb;

namespace WorkflowService.Tests.Store;

/// <summary>
/// How the MongoDB store's group commit hands wait points to its transactions and outcomes back to their callers: runs
/// without a server, on the two commit paths given as functions that record what they were asked. The transactions
/// themselves (a group all or nothing, a stale wait point among others failing alone) are exercised on a replica set by
/// the store contract suite (<see cref="StoreContractTests{TBackend}"/>).
/// </summary>
public sealed class MongoGroupCommitTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static WaitPointCommit WaitPoint() => new() { Instance = new WorkflowInstance { Id = Guid.NewGuid(), DefinitionName = "grouped" }, ExpectedVersion = 1 };

    /// <summary>Two commit paths that record their calls; the first call of either waits for <paramref name="gate"/>.</summary>
    private sealed class Recorder(Task gate)
    {
        private int _calls;

        public List<int> Groups { get; } = [];

        public List<WaitPointCommit> Alone { get; } = [];

        public Func<WaitPointCommit, Exception?> OutcomeAlone { get; init; } = _ => null;

        public Exception? GroupFailure { get; init; }

        public async Task CommitGroupAsync(IReadOnlyList<WaitPointCommit> commits, CancellationToken cancellationToken)
        {
            await FirstWaitsAsync();
            lock (Groups)
            {
                Groups.Add(commits.Count);
            }

            if (GroupFailure is not null)
            {
                throw GroupFailure;
            }
        }

        public async Task CommitOneAsync(WaitPointCommit commit, CancellationToken cancellationToken)
        {
            await FirstWaitsAsync();
            lock (Alone)
            {
                Alone.Add(commit);
            }

            if (OutcomeAlone(commit) is { } failure)
            {
                throw failure;
            }
        }

        /// <summary>Set once the first call has begun (the writer holds it until the gate opens).</summary>
        public TaskCompletionSource Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        private Task FirstWaitsAsync()
        {
            if (Interlocked.Increment(ref _calls) != 1)
            {
                return Task.CompletedTask;
            }

            Entered.SetResult();
            return gate;
        }
    }

    /// <summary>Queues one wait point that holds the single writer, then <paramref name="more"/> behind it, then lets the writer go.</summary>
    private static async Task<List<Task>> QueueBehindOneAsync(MongoGroupCommit group, Recorder recorder, TaskCompletionSource gate,
        IReadOnlyList<WaitPointCommit> more)
    {
        var first = group.CommitAsync(WaitPoint(), Token);
        await recorder.Entered.Task.WaitAsync(TimeSpan.FromSeconds(30), Token);
        // The queue has room: each of these is queued before its call returns.
        var rest = more.Select(commit => group.CommitAsync(commit, Token)).ToList();
        gate.SetResult();
        await first;
        return rest;
    }

    [Fact]
    public async Task A_wait_point_alone_commits_in_a_transaction_of_its_own()
    {
        var recorder = new Recorder(Task.CompletedTask);
        await using var group = new MongoGroupCommit(1, 32, recorder.CommitGroupAsync, recorder.CommitOneAsync);
        var commit = WaitPoint();

        await group.CommitAsync(commit, Token);

        Assert.Same(commit, Assert.Single(recorder.Alone));
        Assert.Empty(recorder.Groups);
    }

    [Fact]
    public async Task Wait_points_queued_while_the_writer_is_busy_commit_together_up_to_the_batch_size()
    {
        var gate = new TaskCompletionSource();
        var recorder = new Recorder(gate.Task);
        await using var group = new MongoGroupCommit(1, 4, recorder.CommitGroupAsync, recorder.CommitOneAsync);

        var rest = await QueueBehindOneAsync(group, recorder, gate, Enumerable.Range(0, 6).Select(_ => WaitPoint()).ToList());
        await Task.WhenAll(rest);

        // The writer was busy with the first: the six behind it went in a group of four, then a group of two.
        Assert.Equal([4, 2], recorder.Groups);
        Assert.Single(recorder.Alone);
    }

    [Fact]
    public async Task A_group_that_would_not_go_in_whole_is_committed_one_by_one_each_to_its_own_outcome()
    {
        var gate = new TaskCompletionSource();
        var stale = WaitPoint();
        var recorder = new Recorder(gate.Task)
        {
            GroupFailure = new GroupNotAppliedException(),
            OutcomeAlone = commit => commit == stale ? new ConcurrencyConflictException(commit.Instance.Id) : null,
        };
        await using var group = new MongoGroupCommit(1, 32, recorder.CommitGroupAsync, recorder.CommitOneAsync);
        var others = new[] { WaitPoint(), WaitPoint() };

        var rest = await QueueBehindOneAsync(group, recorder, gate, [others[0], stale, others[1]]);

        await rest[0];
        await Assert.ThrowsAsync<ConcurrencyConflictException>(() => rest[1]);
        await rest[2];
        Assert.Equal([3], recorder.Groups);
        // One after the other, in the order they were queued (the first was alone before them).
        Assert.Equal([others[0], stale, others[1]], recorder.Alone.Skip(1));
    }

    [Fact]
    public async Task A_group_that_failed_because_the_store_is_out_of_reach_fails_every_caller_in_it_and_the_writer_goes_on()
    {
        var gate = new TaskCompletionSource();
        var unreachable = new TimeoutException("no primary");
        var recorder = new Recorder(gate.Task) { GroupFailure = unreachable };
        await using var group = new MongoGroupCommit(1, 32, recorder.CommitGroupAsync, recorder.CommitOneAsync);

        var rest = await QueueBehindOneAsync(group, recorder, gate, [WaitPoint(), WaitPoint()]);

        foreach (var caller in rest)
        {
            Assert.Same(unreachable, await Assert.ThrowsAsync<TimeoutException>(() => caller));
        }

        // Not committed one by one: the failure was not a wait point's own.
        Assert.Single(recorder.Alone);
        var later = WaitPoint();
        await group.CommitAsync(later, Token);
        Assert.Contains(later, recorder.Alone);
    }
}
