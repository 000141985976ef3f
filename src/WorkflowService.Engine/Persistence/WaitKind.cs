namespace WorkflowService.Engine.Persistence;

public enum WaitKind
{
    Signal,
    Timer,
    Task,
}
