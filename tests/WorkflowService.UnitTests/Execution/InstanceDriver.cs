using System.Text.Json.Nodes;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using WorkflowService.UnitTests.Compilation;

namespace WorkflowService.UnitTests.Execution;

/// <summary>
/// Drives one instance through the executor with no host and no store: it starts the instance, hands it signals, and
/// keeps, between runs, only what a store would (the committed instance and its parked signals). Every run's commit is
/// returned for the test to inspect; the clock moves only when the test says so.
/// </summary>
internal sealed class InstanceDriver
{
    public static readonly DateTime StartTime = new(2025, 1, 1, 0, 0, 0, DateTimeKind.Utc);
    public static readonly long StartMs = new DateTimeOffset(StartTime).ToUnixTimeMilliseconds();

    private readonly List<SignalMessage> _parked = [];
    private long _nextLease = 100;

    private InstanceDriver(string json, EngineOptions options, TimeProvider time)
    {
        Definition = CompilerFixture.Valid(json);
        Executor = new WorkflowExecutor(CompilerFixture.Expressions, Options.Create(options), time);
    }

    public static InstanceDriver For(string json, int maxStepsPerRun = 1_000) =>
        new(json, new EngineOptions { MaxStepsPerRun = maxStepsPerRun }, TimeProvider.System);

    /// <summary>A driver whose runs read the time from <paramref name="time"/> (their budget, <c>Engine:MaxRunTime</c>).</summary>
    public static InstanceDriver For(string json, EngineOptions options, TimeProvider time) => new(json, options, time);

    public WorkflowExecutor Executor { get; }
    public CompiledDefinition Definition { get; }

    /// <summary>The instance as the last commit left it (what a store would hold).</summary>
    public WorkflowInstance Instance { get; private set; } = null!;

    /// <summary>The signals parked so far and not yet consumed or closed, oldest first.</summary>
    public IReadOnlyList<SignalMessage> Parked => _parked;

    public DateTime Now { get; private set; } = StartTime;
    public long NowMs { get; private set; } = StartMs;

    /// <summary>The store's clock as the executor reads it.</summary>
    public StoreInstant Instant => new(Now);

    public void Advance(TimeSpan by)
    {
        Now += by;
        NowMs += (long)by.TotalMilliseconds;
    }

    /// <summary>The instance as a runtime creates it, before its first run.</summary>
    public WorkflowInstance NewInstance(string? inputJson = null, string? businessKey = null, Guid? parentId = null, Guid? parentWaitId = null) => new()
    {
        Id = Guid.CreateVersion7(),
        DefinitionName = Definition.Name,
        DefinitionVersion = Definition.Version,
        Status = InstanceStatus.Running,
        BusinessKey = businessKey,
        InputJson = inputJson,
        VariablesJson = Definition.InitialVariablesJson,
        ParentInstanceId = parentId,
        ParentWaitId = parentWaitId,
        CreatedAt = Now,
        UpdatedAt = Now,
    };

    /// <summary>Starts an instance; its first run must succeed.</summary>
    public WaitPointCommit Start(string? inputJson = null, string? businessKey = null, Guid? parentId = null, Guid? parentWaitId = null) =>
        Apply(Succeeded(Executor.Start(Definition, NewInstance(inputJson, businessKey, parentId, parentWaitId), Instant)));

    /// <summary>Starts an instance whose first run must fail; the instance is then kept as a runtime stores it (Running, with the error).</summary>
    public RunResult StartFailing(string? inputJson = null)
    {
        var run = Executor.Start(Definition, NewInstance(inputJson), Instant);
        Assert.False(run.Succeeded, "the first run was expected to fail");
        StoreUnstarted(run.Error!);
        return run;
    }

    /// <summary>
    /// Stores an instance whose first run failed as a runtime does: Running, no wait, the error kept, and only its
    /// InstanceStarted event in the history. (Start changes the instance it is given even when the run fails, so a
    /// fresh one is stored.)
    /// </summary>
    public void StoreUnstarted(string error, string? inputJson = null)
    {
        var instance = NewInstance(inputJson);
        instance.Error = error;
        instance.HistoryLength = 1;
        instance.Version = 1;
        Instance = instance;
    }

    /// <summary>Applies a signal; the run must succeed and its commit is kept (a signal it parks is kept parked, as a store does).</summary>
    public WaitPointCommit Send(SignalMessage signal)
    {
        var commit = Apply(Succeeded(TryResume(signal)));
        if (commit.SignalTransitions.Any(t => t.SignalId == signal.Id && t.Status == SignalStatus.Parked))
        {
            signal.Status = SignalStatus.Parked;
            _parked.Add(signal);
        }

        return commit;
    }

    /// <summary>Applies a signal without keeping anything: the result as the executor returns it.</summary>
    public RunResult TryResume(SignalMessage signal) => Executor.Resume(Definition, Instance, Claimed(signal), _parked.ToList(), Instant);

    /// <summary>A user signal for the instance, as the API queues it.</summary>
    public SignalMessage Signal(string name, string? payloadJson = null) => new()
    {
        Id = Guid.CreateVersion7(),
        InstanceId = Instance.Id,
        Name = name,
        PayloadJson = payloadJson,
        Status = SignalStatus.Pending,
        DueAtMs = NowMs,
        CreatedAt = Now,
    };

    /// <summary>The completion of a human task, as the task inbox queues it.</summary>
    public SignalMessage TaskCompletion(Guid taskId, string? resultJson = null)
    {
        var signal = Signal(SignalMessage.TaskSignal, resultJson);
        signal.SubjectId = taskId;
        return signal;
    }

    /// <summary>A signal as a worker claims it: with a fresh lease token and one more attempt.</summary>
    public SignalMessage Claimed(SignalMessage signal)
    {
        signal.LeaseToken = _nextLease++;
        signal.Attempts++;
        return signal;
    }

    /// <summary>Keeps what a store would keep of a successful commit: the instance row (one version on) and the parked signals.</summary>
    public WaitPointCommit Apply(WaitPointCommit commit)
    {
        var stored = commit.Instance.Clone();
        stored.Version = commit.IsNew ? 1 : commit.ExpectedVersion + 1;
        Instance = stored;
        foreach (var transition in commit.SignalTransitions)
        {
            _parked.RemoveAll(s => s.Id == transition.SignalId);
        }

        if (commit.CloseOpenWork)
        {
            _parked.Clear();
        }

        return commit;
    }

    /// <summary>Releases a suspended instance; returns the parked signals the store queues again (they are no longer parked).</summary>
    public (WaitPointCommit Commit, List<SignalMessage> Requeued) Unsuspend()
    {
        var commit = Apply(WorkflowExecutor.Unsuspend(Instance, Instant));
        Assert.True(commit.RequeueParked);
        var requeued = _parked.ToList();
        _parked.Clear();
        requeued.ForEach(s => s.Status = SignalStatus.Pending);
        return (commit, requeued);
    }

    public static WaitPointCommit Succeeded(RunResult run)
    {
        Assert.True(run.Succeeded, $"the run failed at '{run.FailedStepId}': {run.Error}");
        return run.Commit!;
    }

    /// <summary>The only new signal of the commit with <paramref name="name"/>.</summary>
    public static SignalMessage NewSignal(WaitPointCommit commit, string name) => Assert.Single(commit.NewSignals, s => s.Name == name);

    public static string[] HistoryTypes(WaitPointCommit commit) => commit.History.Select(h => h.Type).ToArray();

    public static JsonNode? Variables(WaitPointCommit commit) => JsonNode.Parse(commit.Instance.VariablesJson);

    /// <summary>The data of the only history event of <paramref name="type"/>.</summary>
    public static JsonNode? EventData(WaitPointCommit commit, string type) =>
        JsonNode.Parse(Assert.Single(commit.History, h => h.Type == type).DataJson ?? "null");
}
