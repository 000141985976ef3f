using System.Xml;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Waits for a named signal (one that arrived early is taken at once), optionally until a timeout.</summary>
public sealed record WaitForSignalStep : CompiledStep, IContinuingStep, IOutputStep
{
    internal static readonly StepType Type = new(
        StepField.Next | StepField.Signal | StepField.Timeout | StepField.OnTimeout | StepField.Output, Compile);

    private WaitForSignalStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.WaitForSignal;
    public override bool Waits => true;
    public string? Next { get; init; }
    public required string Signal { get; init; }
    public SignalTimeout? Timeout { get; init; }
    public string? Output { get; init; }

    private static WaitForSignalStep? Compile(StepCompilation c)
    {
        var step = c.Document;
        var signal = DefinitionCompiler.IsValidName(step.Signal) ? step.Signal : null;
        if (signal is null)
        {
            c.Error("signal", "signal is required: the name of the awaited signal (letters, digits, '.', '_' or '-')");
        }

        var timeout = c.Duration(step.Timeout, "timeout", required: false);
        var onTimeout = c.Target(step.OnTimeout, "onTimeout", required: step.Timeout is not null);
        if (step.Timeout is null && step.OnTimeout is not null)
        {
            c.Error("onTimeout", "onTimeout needs a timeout");
        }

        c.Variable(step.Output, "output");
        return signal is null ? null : new WaitForSignalStep(c)
        {
            Next = c.Next,
            Signal = signal,
            Timeout = timeout is { } after && onTimeout is not null ? new SignalTimeout(after, onTimeout) : null,
            Output = step.Output,
        };
    }

    public override IEnumerable<string> Successors() => Targets(Next, Timeout?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.WaitForSignal;
        document.Signal = Signal;
        document.Timeout = Timeout is null ? null : XmlConvert.ToString(Timeout.After);
        document.OnTimeout = Timeout?.Next;
        document.Output = Output;
    }

    internal override ThreadResult Run(RunState run)
    {
        if (run.TakeParked(Signal) is { } early)
        {
            run.Scope.SetSignal(early.PayloadJson);
            if (Output is not null)
            {
                run.Scope.AssignJson(Output, early.PayloadJson);
            }

            run.Append(HistoryEventTypes.SignalReceived, Id, new { signal = early.Name, signalId = early.Id, early = true });
            return ThreadResult.ContinueAt(Next);
        }

        Guid? timer = Timeout is null
            ? null
            : run.AddOwnSignal(SignalMessage.TimeoutSignal, run.Now.After(Timeout.After));
        run.Append(HistoryEventTypes.WaitStarted, Id, new { signal = Signal });
        return ThreadResult.Waits(new WaitPoint(WaitKind.Signal, Id) { Signal = Signal, TimerId = timer });
    }
}

/// <summary>How long a signal wait lasts, and where the run continues when it times out.</summary>
public sealed record SignalTimeout(TimeSpan After, string Next);
