using System.Text.Json;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>
/// Sends a custom event: its type and data are expressions. The event is recorded in the history and written to the
/// outbox with the commit of the wait point the run reaches, so it is sent only if that commit happens.
/// </summary>
public sealed record EmitStep : CompiledStep, IContinuingStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(StepField.Next | StepField.Event | StepField.Data | StepField.OnError, Compile);

    private EmitStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Emit;
    public string? Next { get; init; }
    public required CompiledExpression Event { get; init; }
    public CompiledExpression? Data { get; init; }
    public ErrorPath? OnError { get; init; }

    private static EmitStep? Compile(StepCompilation c)
    {
        var type = c.Expr(c.Document.Event, "event", required: true);
        var data = c.Expr(c.Document.Data, "data", required: false);
        // A type written as a string literal is checked now; one computed at run time is checked when it runs.
        if (c.Document.Event is { } source && Literal(source) is { } literal && EventTypes.CustomTypeProblem(literal) is { } problem)
        {
            c.Error("event", problem);
            return null;
        }

        return type is null ? null : new EmitStep(c) { Next = c.Next, Event = type, Data = data, OnError = c.ErrorPath };
    }

    /// <summary>The text of a JavaScript string literal ('x' or "x" with no escapes); null for any other expression.</summary>
    private static string? Literal(string source)
    {
        var text = source.Trim();
        return text.Length >= 2 && (text[0] is '\'' or '"') && text[^1] == text[0] && text.IndexOf('\\', StringComparison.Ordinal) < 0
               && text.IndexOf(text[0], 1) == text.Length - 1
            ? text[1..^1]
            : null;
    }

    public override IEnumerable<string> Successors() => Targets(Next, OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Emit;
        document.Event = Event.Source;
        document.Data = Data?.Source;
    }

    internal override ThreadResult Run(RunState run)
    {
        var type = run.Scope.EvaluateToString(Event) ?? throw new ExpressionFailedException("the event type is null");
        if (EventTypes.CustomTypeProblem(type) is { } problem)
        {
            throw new ExpressionFailedException($"the event type '{Shorten(type)}' cannot be sent: {problem}");
        }

        JsonElement? data = Data is null ? null : JsonSerializer.Deserialize<JsonElement>(run.Scope.EvaluateToJson(Data));
        run.Append(HistoryEventTypes.EventEmitted, Id, new { type, data });
        return ThreadResult.ContinueAt(Next);
    }

    private static string Shorten(string text) => text.Length <= 60 ? text : text[..57] + "...";
}
