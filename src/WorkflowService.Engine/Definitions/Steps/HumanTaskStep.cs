using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Opens a task for a person and waits until it is completed.</summary>
public sealed record HumanTaskStep : CompiledStep, IContinuingStep, IOutputStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(
        StepField.Next | StepField.Title | StepField.Assignee | StepField.Role | StepField.Data | StepField.Output | StepField.OnError,
        Compile);

    private HumanTaskStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.HumanTask;
    public override bool Waits => true;
    public string? Next { get; init; }
    public required string Title { get; init; }
    public CompiledExpression? Assignee { get; init; }
    public string? Role { get; init; }
    public CompiledExpression? Data { get; init; }
    public string? Output { get; init; }
    public ErrorPath? OnError { get; init; }

    private static HumanTaskStep? Compile(StepCompilation c)
    {
        var step = c.Document;
        if (string.IsNullOrWhiteSpace(step.Title))
        {
            c.Error("title", "title is required for a humanTask step");
        }

        var assignee = c.Expr(step.Assignee, "assignee", required: false);
        var data = c.Expr(step.Data, "data", required: false);
        c.Variable(step.Output, "output");
        return step.Title is null ? null : new HumanTaskStep(c)
        {
            Next = c.Next,
            Title = step.Title,
            Assignee = assignee,
            Role = step.Role,
            Data = data,
            Output = step.Output,
            OnError = c.ErrorPath,
        };
    }

    public override IEnumerable<string> Successors() => Targets(Next, OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.HumanTask;
        document.Title = Title;
        document.Assignee = Assignee?.Source;
        document.Role = Role;
        document.Data = Data?.Source;
        document.Output = Output;
    }

    internal override ThreadResult Run(RunState run)
    {
        var state = run.State;
        var task = new HumanTask
        {
            Id = Guid.CreateVersion7(),
            InstanceId = state.Id,
            Tenant = state.Tenant,
            DefinitionName = state.DefinitionName,
            StepId = Id,
            Title = Title,
            Assignee = Assignee is null ? null : run.Scope.EvaluateToString(Assignee),
            Role = Role,
            DataJson = Data is null ? null : run.Scope.EvaluateToJson(Data),
            Status = HumanTaskStatus.Open,
            CreatedAt = run.Now.UtcDateTime,
        };
        run.Commit.NewTasks.Add(task);
        run.Append(HistoryEventTypes.TaskCreated, Id, new { taskId = task.Id, task.Title, task.Assignee, task.Role });
        return ThreadResult.Waits(new WaitPoint(WaitKind.Task, Id) { TaskId = task.Id });
    }
}
