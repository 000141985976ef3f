using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>A signal to an instance; <c>dueAt</c> delays it (a timer).</summary>
public sealed record SendSignalRequest(string Name, JsonElement? Payload, DateTimeOffset? DueAt);

/// <summary>A signal and its fate; <c>claimedBy</c> is the node that holds or last held its claim (the one that handled it).</summary>
public sealed record SignalView(
    Guid Id,
    Guid InstanceId,
    string Name,
    JsonElement? Payload,
    SignalStatus Status,
    DateTimeOffset DueAt,
    int Attempts,
    string? ClaimedBy,
    string? LastError,
    Guid? TaskId,
    DateTime CreatedAt,
    DateTime? HandledAt)
{
    public static SignalView From(SignalMessage s) => new(
        s.Id, s.InstanceId, s.Name, Json.Element(s.PayloadJson), s.Status, DateTimeOffset.FromUnixTimeMilliseconds(s.DueAtMs),
        s.Attempts, s.LeaseOwner, s.LastError, s.TaskId, s.CreatedAt, s.HandledAt);
}
