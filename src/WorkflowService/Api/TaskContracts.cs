using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

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
public sealed record ClaimTaskRequest(string? User);

public sealed record CompleteTaskRequest(string? User, JsonElement? Result);
