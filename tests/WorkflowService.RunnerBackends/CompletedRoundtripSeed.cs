using System.Globalization;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The completed signal-roundtrip instance the table-growth scenario stores in bulk, on the engine's own types: instance
/// <c>n</c>, created at a time in milliseconds, its "go" signal handled 20 ms later and the instance completed 40 ms after
/// its start, with the variables, output and five history events the service writes. Every backend seeds from here: MongoDB
/// through <see cref="Build"/>, the relational stores through the SQL fragments, which generate the same rows server-side.
/// </summary>
internal static class CompletedRoundtripSeed
{
    public const string Definition = "signal-roundtrip";
    public const int DefinitionVersion = 1;
    public const string Signal = "go";
    public const string LeaseOwner = "seed";
    public const int SignalDueAfterMs = 20;
    public const int CompletedAfterMs = 40;
    public const int SignalReceivedSequence = 2;

    /// <summary>The instance's history in order; <see cref="SignalReceivedSequence"/>'s data names the signal (<see cref="SignalReceivedData"/>).</summary>
    public static IReadOnlyList<SeedEvent> History { get; } =
    [
        new(0, 0, HistoryEventTypes.InstanceStarted, null, $$"""{"definition":"{{Definition}}","version":{{DefinitionVersion}}}"""),
        new(1, 0, HistoryEventTypes.WaitStarted, "wait-go", $$"""{"signal":"{{Signal}}"}"""),
        new(SignalReceivedSequence, CompletedAfterMs, HistoryEventTypes.SignalReceived, "wait-go", null),
        new(3, CompletedAfterMs, HistoryEventTypes.StepCompleted, "assign", null),
        new(4, CompletedAfterMs, HistoryEventTypes.InstanceCompleted, "done", null),
    ];

    public static string InstanceStatusText => nameof(InstanceStatus.Completed);
    public static string SignalStatusText => nameof(SignalStatus.Handled);

    /// <summary>The data of the SignalReceived event, with <paramref name="signalId"/> as the store writes a Guid (lower case).</summary>
    public static string SignalReceivedData(string signalId) => $$"""{"signal":"{{Signal}}","signalId":"{{signalId}}"}""";

    /// <summary>
    /// The history as a SQL row source (seq, offset_ms, type, step, data) that PostgreSQL and SQLite both read, for an
    /// INSERT … SELECT that crosses it with the seeded instances.
    /// </summary>
    public static string HistorySql { get; } = string.Join("\nUNION ALL ", History.Select((e, i) => i == 0
        ? $"SELECT {e.Sequence} AS seq, {e.OffsetMs} AS offset_ms, {Literal(e.Type)} AS type, {Literal(e.StepId)} AS step, {Literal(e.DataJson)} AS data"
        : $"SELECT {e.Sequence}, {e.OffsetMs}, {Literal(e.Type)}, {Literal(e.StepId)}, {Literal(e.DataJson)}"));

    /// <summary>
    /// Seeded instance <paramref name="n"/>, created at <paramref name="ms"/>: ids as the relational seeds make them
    /// (time-ordered, the number in the last group).
    /// </summary>
    public static (WorkflowInstance Instance, SignalMessage Signal, HistoryEvent[] History) Build(int n, long ms)
    {
        var time = ms.ToString("x12", CultureInfo.InvariantCulture);
        var instanceId = Guid.Parse($"{time[..8]}-{time[8..]}-7000-8000-{n:x12}");
        var signalId = Guid.Parse($"{time[..8]}-{time[8..]}-7000-9000-{n:x12}");
        var started = DateTimeOffset.FromUnixTimeMilliseconds(ms).UtcDateTime;
        var completed = started.AddMilliseconds(CompletedAfterMs);
        var instance = new WorkflowInstance
        {
            Id = instanceId, DefinitionName = Definition, DefinitionVersion = DefinitionVersion, Status = InstanceStatus.Completed,
            VariablesJson = $$$"""{"go":{"value":{{{n}}}},"result":{"value":{{{n}}}}}""", OutputJson = $$$"""{"result":{"value":{{{n}}}}}""",
            Version = 2, HistoryLength = History.Count, CreatedAt = started, UpdatedAt = completed, CompletedAt = completed,
        };
        var signal = new SignalMessage
        {
            Id = signalId, InstanceId = instanceId, Name = Signal, PayloadJson = $$$"""{"value":{{{n}}}}""", Status = SignalStatus.Handled,
            DueAtMs = ms + SignalDueAfterMs, Attempts = 1, LeaseOwner = LeaseOwner, LeaseToken = n,
            CreatedAt = started.AddMilliseconds(SignalDueAfterMs), HandledAt = completed,
        };
        return (instance, signal, [.. History.Select(e => new HistoryEvent
        {
            InstanceId = instanceId, Sequence = e.Sequence, At = started.AddMilliseconds(e.OffsetMs), Type = e.Type, StepId = e.StepId,
            DataJson = e.Sequence == SignalReceivedSequence ? SignalReceivedData(signalId.ToString()) : e.DataJson,
        })]);
    }

    private static string Literal(string? text) => text is null ? "NULL" : "'" + text.Replace("'", "''", StringComparison.Ordinal) + "'";
}

/// <summary>One history event of the seeded instance, <paramref name="OffsetMs"/> after its start.</summary>
internal sealed record SeedEvent(int Sequence, int OffsetMs, string Type, string? StepId, string? DataJson);
