using System.Xml;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Waits for a fixed time.</summary>
public sealed record DelayStep : CompiledStep, IContinuingStep
{
    internal static readonly StepType Type = new(StepField.Next | StepField.Duration, Compile);

    private DelayStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Delay;
    public override bool Waits => true;
    public string? Next { get; init; }
    public required TimeSpan Duration { get; init; }

    private static DelayStep? Compile(StepCompilation c) =>
        c.Duration(c.Document.Duration, "duration", required: true) is { } duration
            ? new DelayStep(c) { Next = c.Next, Duration = duration }
            : null;

    public override IEnumerable<string> Successors() => Targets(Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Delay;
        document.Duration = XmlConvert.ToString(Duration);
    }

    internal override ThreadResult Run(RunState run)
    {
        var dueAt = run.Now.After(Duration);
        var timer = run.AddOwnSignal(SignalMessage.TimerSignal, dueAt);
        run.Append(HistoryEventTypes.WaitStarted, Id, new { timer = DateTimeOffset.FromUnixTimeMilliseconds(dueAt) });
        return ThreadResult.Waits(new WaitPoint(WaitKind.Timer, Id) { TimerId = timer });
    }
}
