namespace WorkflowService.Engine.Definitions;

/// <summary>One problem the compiler found, located by a JSON path into the submitted definition.</summary>
public sealed record Diagnostic(string Path, string Message);
