namespace WorkflowService.Engine.Definitions;

public enum StepKind
{
    Assign,
    WaitForSignal,
    Delay,
    Decision,
    HumanTask,
    Complete,
    Fail,
    Http,
    SubWorkflow,
    /// <summary>Runs named branches side by side and continues when every branch has run to its end (join all).</summary>
    Parallel,
    /// <summary>Sends a custom event to the subscriptions that take it, with the commit of the wait point it reaches.</summary>
    Emit,
    /// <summary>Runs its body (or a child instance) once per item of an array and continues when its completion rule is met.</summary>
    ForEach,
}

/// <summary>The names of the step types as a definition document writes them.</summary>
public static class StepKindNames
{
    public const string Assign = "assign";
    public const string WaitForSignal = "waitForSignal";
    public const string Delay = "delay";
    public const string Decision = "decision";
    public const string HumanTask = "humanTask";
    public const string Complete = "complete";
    public const string Fail = "fail";
    public const string Http = "http";
    public const string SubWorkflow = "subWorkflow";
    public const string Parallel = "parallel";
    public const string Emit = "emit";
    public const string ForEach = "forEach";

}
