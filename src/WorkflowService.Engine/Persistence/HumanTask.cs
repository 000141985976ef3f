namespace WorkflowService.Engine.Persistence;

public enum HumanTaskStatus
{
    Open,
    Claimed,
    Completed,
    Cancelled,
}

/// <summary>An inbox item created by a humanTask step; completing it resumes the instance.</summary>
public sealed class HumanTask
{
    public Guid Id { get; set; }
    public Guid InstanceId { get; set; }
    /// <summary>Its instance's tenant, copied when the task is created ("" is the default tenant).</summary>
    public string Tenant { get; set; } = "";
    public required string DefinitionName { get; set; }
    public required string StepId { get; set; }
    public required string Title { get; set; }
    public string? Assignee { get; set; }
    public string? Role { get; set; }
    public HumanTaskStatus Status { get; set; }
    public string? ClaimedBy { get; set; }
    public string? DataJson { get; set; }
    public string? ResultJson { get; set; }
    public DateTime CreatedAt { get; set; }
    public DateTime? CompletedAt { get; set; }
}
