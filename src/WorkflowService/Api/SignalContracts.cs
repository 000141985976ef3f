using System.ComponentModel;
using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>A signal to an instance; <c>dueAt</c> delays it (a timer).</summary>
public sealed record SendSignalRequest(
    [property: Description("The signal's name, as the definition's waitForSignal step awaits it.")] string Name,
    [property: Description("Any JSON value; the waiting step stores it in its output variable.")] JsonElement? Payload = null,
    [property: Description("When to deliver the signal (ISO 8601); at once when left out.")] DateTimeOffset? DueAt = null);

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
        s.Id, s.InstanceId, s.Name, Json.Element(s.ShownPayloadJson), s.Status, DateTimeOffset.FromUnixTimeMilliseconds(s.DueAtMs),
        s.Attempts, s.LeaseOwner, s.LastError, s.TaskId, s.CreatedAt, s.HandledAt);
}

/// <summary>A signal for the instance with a business key, and what to start when there is none.</summary>
public sealed record SignalWithStartRequest(
    [property: Description("The signal's name, as the definition's waitForSignal step awaits it.")] string Signal,
    [property: Description("Any JSON value; the waiting step stores it in its output variable.")] JsonElement? Payload = null,
    [property: Description("The new instance's input, used only when one is started.")] JsonElement? Input = null,
    [property: Description("The definition version to start, used only when one is started; the latest when left out.")] int? Version = null);

/// <summary>A signal-with-start's answer: whether this request started the instance, which one it is, and the signal.</summary>
public sealed record SignalWithStartView(bool Started, Guid InstanceId, SignalView Signal);
