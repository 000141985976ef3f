using System.ComponentModel;
using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>A human task: who may work it (assignee or role), its status, its data for the worker and, once completed, its result.</summary>
public sealed record TaskView(
    Guid Id,
    Guid InstanceId,
    string Definition,
    string StepId,
    string Title,
    string? Assignee,
    string? Role,
    HumanTaskStatus Status,
    string? ClaimedBy,
    JsonElement? Data,
    JsonElement? Result,
    DateTime CreatedAt,
    DateTime? CompletedAt)
{
    public static TaskView From(HumanTask t) => new(
        t.Id, t.InstanceId, t.DefinitionName, t.StepId, t.Title, t.Assignee, t.Role, t.Status, t.ClaimedBy,
        Json.Element(t.DataJson), Json.Element(t.ResultJson), t.CreatedAt, t.CompletedAt);
}

/// <summary>User: who claims; with authentication on, the caller (a different name is refused), so it may be left out.</summary>
public sealed record ClaimTaskRequest([property: Description("Who claims the task. With authentication on that is the caller (another name is refused), so it may be left out.")] string? User = null);

public sealed record CompleteTaskRequest(
    [property: Description("Who completes the task. With authentication on that is the caller, so it may be left out.")] string? User = null,
    [property: Description("Any JSON value; the task step stores it in its output variable.")] JsonElement? Result = null);
