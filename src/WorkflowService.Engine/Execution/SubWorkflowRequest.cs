namespace WorkflowService.Engine.Execution;

/// <summary>What a subWorkflow step starts, carried by its $subflow signal.</summary>
public sealed record SubWorkflowRequest(string Definition, int? Version, string? InputJson);
