using System.Text.Json;
using System.Text.Json.Serialization;

namespace WorkflowService.Engine.Persistence;

/// <summary>
/// One branch of the parallel step an instance is in: where it waits (the same fields as the instance's own wait), or
/// that it has joined. The list of them is stored as <see cref="WorkflowInstance.BranchesJson"/>.
/// </summary>
internal sealed class ParallelBranch : IWaitState
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web)
    {
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingDefault,
        Converters = { new JsonStringEnumConverter() },
    };

    [JsonPropertyName("name")] public required string Name { get; set; }
    /// <summary>The branch ran off the end of its steps: it waits for the others at the join.</summary>
    [JsonPropertyName("joined")] public bool Joined { get; set; }
    [JsonPropertyName("waitKind")] public WaitKind? WaitKind { get; set; }
    [JsonPropertyName("waitStepId")] public string? WaitStepId { get; set; }
    [JsonPropertyName("waitSignal")] public string? WaitSignal { get; set; }
    /// <inheritdoc cref="IWaitState.WaitSignalId"/>
    /// <remarks>Stored under its first name, which branch states written by earlier releases carry.</remarks>
    [JsonPropertyName("waitTimerId")] public Guid? WaitSignalId { get; set; }
    [JsonPropertyName("waitTaskId")] public Guid? WaitTaskId { get; set; }

    // A forEach item: its index and value; whether it started, and how it ended (Joined: it ended).
    [JsonPropertyName("index")] public int? Index { get; set; }
    [JsonPropertyName("item")] public JsonElement? Item { get; set; }
    [JsonPropertyName("started")] public bool Started { get; set; }
    [JsonPropertyName("failed")] public bool Failed { get; set; }
    /// <summary>Closed before it ended: the step's completion rule was met, or it failed, while the item was open.</summary>
    [JsonPropertyName("cancelled")] public bool Cancelled { get; set; }
    [JsonPropertyName("error")] public string? Error { get; set; }
    [JsonPropertyName("result")] public JsonElement? Result { get; set; }

    /// <summary>A forEach item that started and has not ended: it waits.</summary>
    public bool IsOpen => Started && !Joined;

    public void ClearWait()
    {
        IWaitState.Clear(this);
    }

    public static List<ParallelBranch> Parse(string? json) =>
        json is null ? [] : JsonSerializer.Deserialize<List<ParallelBranch>>(json, Json) ?? [];

    public BranchWait ToReadModel() => new(Name, Joined, WaitKind, WaitStepId, WaitSignal, WaitSignalId, WaitTaskId)
    {
        Index = Index,
        Outcome = Index is null ? null
            : Cancelled ? ItemOutcome.Cancelled
            : Failed ? ItemOutcome.Failed
            : Joined ? ItemOutcome.Succeeded
            : Started ? ItemOutcome.Open
            : ItemOutcome.Pending,
        Error = Error,
    };

    public static string Serialize(IReadOnlyList<ParallelBranch> branches) => JsonSerializer.Serialize(branches, Json);
}
