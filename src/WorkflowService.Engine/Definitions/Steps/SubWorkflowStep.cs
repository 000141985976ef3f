using System.Text.Json;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Starts a child instance and waits for it to end; its outcome lands in <see cref="Output"/>.</summary>
public sealed record SubWorkflowStep : CompiledStep, IContinuingStep, IOutputStep
{
    internal static readonly StepType Type = new(
        StepField.Next | StepField.Definition | StepField.Version | StepField.Input | StepField.Output, Compile);

    private SubWorkflowStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.SubWorkflow;
    public override bool Waits => true;
    public string? Next { get; init; }
    /// <summary>The name of the child definition.</summary>
    public required string Definition { get; init; }
    /// <summary>The child definition's version; null: its latest.</summary>
    public int? DefinitionVersion { get; init; }
    public CompiledExpression? Input { get; init; }
    public string? Output { get; init; }

    private static SubWorkflowStep? Compile(StepCompilation c)
    {
        var step = c.Document;
        var definition = DefinitionCompiler.IsValidName(step.Definition) ? step.Definition : null;
        if (definition is null)
        {
            c.Error("definition", "definition is required: the name of the child definition");
        }

        if (step.Version is <= 0)
        {
            c.Error("version", "version must be a positive version number");
        }

        var input = c.Expr(step.Input, "input", required: false);
        c.Variable(step.Output, "output");
        return definition is null ? null : new SubWorkflowStep(c)
        {
            Next = c.Next,
            Definition = definition,
            DefinitionVersion = step.Version,
            Input = input,
            Output = step.Output,
        };
    }

    public override IEnumerable<string> Successors() => Targets(Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.SubWorkflow;
        document.Definition = Definition;
        document.Version = DefinitionVersion;
        document.Input = Input?.Source;
        document.Output = Output;
    }

    internal override ThreadResult Run(RunState run)
    {
        var child = new SubWorkflowRequest(Definition, DefinitionVersion, Input is null ? null : run.Scope.EvaluateToJson(Input));
        var childStart = run.AddOwnSignal(SignalMessage.SubWorkflowSignal, run.Now.UnixMs, JsonSerializer.Serialize(child, EngineJson.Options));
        run.Append(HistoryEventTypes.WaitStarted, Id, new { subWorkflow = Definition });
        return ThreadResult.Waits(new WaitPoint(WaitKind.SubWorkflow, Id) { ChildStartId = childStart });
    }
}
