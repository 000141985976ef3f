using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Ends the instance as completed, with an optional result (on a cancel path: as cancelled).</summary>
public sealed record CompleteStep : CompiledStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(StepField.Result | StepField.OnError, Compile);

    private CompleteStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Complete;
    public CompiledExpression? Result { get; init; }
    public ErrorPath? OnError { get; init; }

    private static CompleteStep Compile(StepCompilation c)
    {
        if (c.Within is not null)
        {
            c.Error("type", $"a complete step cannot be inside {c.Within}: a branch ends by running off the end of its steps (it joins); complete after the parallel step");
        }

        return new CompleteStep(c) { Result = c.Expr(c.Document.Result, "result", required: false), OnError = c.ErrorPath };
    }

    public override IEnumerable<string> Successors() => Targets(OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Complete;
        document.Result = Result?.Source;
    }

    internal override ThreadResult Run(RunState run)
    {
        run.State.OutputJson = Result is null ? null : run.Scope.EvaluateToJson(Result);
        if (run.Cancelling is not null)
        {
            return run.EndCancelPath(Id);
        }

        run.End(InstanceStatus.Completed, null);
        run.Append(HistoryEventTypes.InstanceCompleted, Id, null);
        return ThreadResult.Ended;
    }
}
