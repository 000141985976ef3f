using WorkflowService.Engine.Persistence;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The store's writes for one signal-roundtrip workflow, with no engine and no HTTP around them: the start (the instance
/// and two history events), the signal's insert, the claim and the completion (the instance and the signal updated,
/// three history events). Each backend issues them as its store does (<see cref="RelationalCeilingSession"/>,
/// <see cref="MongoCeilingSession"/>); the workflow they write is this one, so that every backend's ceiling writes the
/// same values. Thread-safe.
/// </summary>
internal abstract class CeilingSession : IAsyncDisposable
{
    /// <summary>A claim's lease, as long as the service's default (Workers:LeaseDuration): the loop never lets one run out.</summary>
    protected static readonly TimeSpan Lease = TimeSpan.FromSeconds(30);

    public abstract Task StartAsync(Guid instanceId, CancellationToken cancellationToken);

    public abstract Task EnqueueAsync(Guid signalId, Guid instanceId, CancellationToken cancellationToken);

    /// <summary>Claims at most one due signal (any instance's, as a worker would); null when none was free.</summary>
    public async Task<ClaimedSignal?> ClaimAsync(string owner, CancellationToken cancellationToken) =>
        await ClaimAsync(owner, 1, cancellationToken) is [var claimed, ..] ? claimed : null;

    /// <summary>Claims up to <paramref name="max"/> due signals, each with its instance, as the store's claim does.</summary>
    public abstract Task<IReadOnlyList<ClaimedSignal>> ClaimAsync(string owner, int max, CancellationToken cancellationToken);

    /// <summary>Completes the claimed signal's instance; throws when the instance's version or the signal's lease was lost.</summary>
    public abstract Task CompleteAsync(ClaimedSignal claimed, CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();

    /// <summary>The started instance, waiting for "go" (version 1, two history events).</summary>
    protected static WorkflowInstance StartedInstance(Guid instanceId, DateTime now) => new()
    {
        Id = instanceId, DefinitionName = "ceiling", DefinitionVersion = 1, Status = InstanceStatus.Waiting, WaitKind = WaitKind.Signal,
        WaitStepId = "wait-go", WaitSignal = "go", Version = 1, HistoryLength = 2, CreatedAt = now, UpdatedAt = now,
    };

    protected static HistoryEvent[] StartHistory(Guid instanceId, DateTime now) =>
    [
        Event(instanceId, now, 0, "InstanceStarted", null, """{"definition":"ceiling","version":1}"""),
        Event(instanceId, now, 1, "WaitStarted", "wait-go", """{"signal":"go"}"""),
    ];

    /// <summary>The "go" signal, due now.</summary>
    protected static SignalMessage GoSignal(Guid signalId, Guid instanceId, DateTime now) => new()
    {
        Id = signalId, InstanceId = instanceId, Name = "go", PayloadJson = """{"value":1}""", Status = SignalStatus.Pending,
        DueAtMs = new DateTimeOffset(now).ToUnixTimeMilliseconds(), CreatedAt = now,
    };

    /// <summary>The claimed signal's instance, completed (version 2, five history events); a stand-in where the claim read none.</summary>
    protected static WorkflowInstance CompletedInstance(ClaimedSignal claimed, DateTime now)
    {
        var instance = claimed.Instance ?? new WorkflowInstance { Id = claimed.Signal.InstanceId, DefinitionName = "ceiling", DefinitionVersion = 1, CreatedAt = now };
        instance.Status = InstanceStatus.Completed;
        instance.VariablesJson = """{"go":{"value":1},"result":{"value":1}}""";
        instance.OutputJson = """{"result":{"value":1}}""";
        (instance.WaitKind, instance.WaitStepId, instance.WaitSignal) = (null, null, null);
        (instance.Version, instance.HistoryLength, instance.UpdatedAt, instance.CompletedAt) = (2, 5, now, now);
        return instance;
    }

    protected static HistoryEvent[] CompletionHistory(Guid instanceId, Guid signalId, DateTime now) =>
    [
        Event(instanceId, now, 2, "SignalReceived", "wait-go", $$"""{"signal":"go","signalId":"{{signalId}}"}"""),
        Event(instanceId, now, 3, "StepCompleted", "assign", null),
        Event(instanceId, now, 4, "InstanceCompleted", "done", null),
    ];

    private static HistoryEvent Event(Guid instanceId, DateTime at, int sequence, string type, string? stepId, string? data) => new()
    {
        InstanceId = instanceId, Sequence = sequence, At = at, Type = type, StepId = stepId, DataJson = data,
    };
}
