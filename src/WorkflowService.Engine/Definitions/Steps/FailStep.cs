using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Ends the instance as failed, with a reason (on a cancel path: as cancelled; in a forEach body it fails the item).</summary>
public sealed record FailStep : CompiledStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(StepField.Reason | StepField.OnError, Compile);

    private FailStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Fail;
    public required CompiledExpression Reason { get; init; }
    public ErrorPath? OnError { get; init; }

    private static FailStep? Compile(StepCompilation c) =>
        c.Expr(c.Document.Reason, "reason", required: true) is { } reason
            ? new FailStep(c) { Reason = reason, OnError = c.ErrorPath }
            : null;

    public override IEnumerable<string> Successors() => Targets(OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Fail;
        document.Reason = Reason.Source;
    }

    internal override ThreadResult Run(RunState run)
    {
        if (run.Cancelling is not null)
        {
            // A cancel path's fail has no result to keep.
            run.State.OutputJson = null;
            return run.EndCancelPath(Id);
        }

        var reason = run.Scope.EvaluateToString(Reason) ?? "failed";
        if (run.Item is not null)
        {
            // In a forEach body a fail ends the item; the step's tolerated failures decide the instance.
            return new ThreadResult(ThreadEnd.ItemFailed, reason);
        }

        run.End(InstanceStatus.Failed, reason);
        run.Append(HistoryEventTypes.InstanceFailed, Id, new { reason });
        return ThreadResult.Ended;
    }
}
