using System.Text.Json;
using System.Xml;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Definitions;

/// <summary>Calls out over HTTP (with retries) and waits for the response, which lands in <see cref="Output"/>.</summary>
public sealed record HttpStep : CompiledStep, IContinuingStep, IOutputStep, IErrorHandlingStep
{
    internal static readonly StepType Type = new(
        StepField.Next | StepField.Method | StepField.Url | StepField.Body | StepField.Headers | StepField.Timeout | StepField.Retries
        | StepField.Output | StepField.OnError,
        Compile);

    private HttpStep(StepCompilation source) : base(source)
    {
    }

    public override StepKind Kind => StepKind.Http;
    public override bool Waits => true;
    public string? Next { get; init; }
    public required string Method { get; init; }
    public required CompiledExpression Url { get; init; }
    public CompiledExpression? Body { get; init; }
    public required IReadOnlyList<KeyValuePair<string, CompiledExpression>> Headers { get; init; }
    /// <summary>The timeout of one attempt; <see cref="WorkflowExecutor.DefaultCallOutTimeout"/> when none is given.</summary>
    public TimeSpan? Timeout { get; init; }
    /// <summary>The retries after a failed attempt; <see cref="WorkflowExecutor.DefaultCallOutRetries"/> when none are given.</summary>
    public int? Retries { get; init; }
    public string? Output { get; init; }
    public ErrorPath? OnError { get; init; }

    private static HttpStep? Compile(StepCompilation c)
    {
        var step = c.Document;
        var method = step.Method is not null && DefinitionCompiler.HttpMethods.Contains(step.Method) ? step.Method : null;
        if (method is null)
        {
            c.Error("method", $"method is required: one of {string.Join(", ", DefinitionCompiler.HttpMethods)}");
        }

        var url = c.Expr(step.Url, "url", required: true, secrets: true);
        var body = c.Expr(step.Body, "body", required: false, secrets: true);
        var headers = new List<KeyValuePair<string, CompiledExpression>>();
        foreach (var (header, source) in step.Headers ?? [])
        {
            if (c.Expr(source, $"headers.{header}", required: true, secrets: true) is { } expression)
            {
                headers.Add(new(header, expression));
            }
        }

        var timeout = c.Duration(step.Timeout, "timeout", required: false);
        if (timeout > DefinitionCompiler.MaxCallOutTimeout || timeout == TimeSpan.Zero)
        {
            // A zero timeout would fail every call before it is sent.
            c.Error("timeout", "an http step's timeout is more than PT0S and at most PT5M");
        }

        if (step.Retries is < 0 or > 10)
        {
            c.Error("retries", "retries must be between 0 and 10");
        }

        c.Variable(step.Output, "output");
        return method is null || url is null ? null : new HttpStep(c)
        {
            Next = c.Next,
            Method = method,
            Url = url,
            Body = body,
            Headers = headers,
            Timeout = timeout,
            Retries = step.Retries,
            Output = step.Output,
            OnError = c.ErrorPath,
        };
    }

    public override IEnumerable<string> Successors() => Targets(Next, OnError?.Next);

    internal override void Decompile(StepDocument document)
    {
        document.Type = StepKindNames.Http;
        document.Method = Method;
        document.Url = Url.Source;
        document.Body = Body?.Source;
        document.Headers = Headers.Count > 0 ? Headers.ToDictionary(h => h.Key, h => h.Value.Source) : null;
        document.Timeout = Timeout is { } timeout ? XmlConvert.ToString(timeout) : null;
        document.Retries = Retries;
        document.Output = Output;
    }

    internal override ThreadResult Run(RunState run)
    {
        var scope = run.Scope;
        var request = new CallOutRequest(
            Method,
            scope.EvaluateToString(Url) ?? throw new ExpressionFailedException("the url is null"),
            Body is null ? null : scope.EvaluateToJson(Body),
            Headers.Count == 0 ? null : Headers.ToDictionary(h => h.Key, h => scope.EvaluateToString(h.Value) ?? string.Empty),
            (int)(Timeout ?? WorkflowExecutor.DefaultCallOutTimeout).TotalMilliseconds,
            Retries ?? WorkflowExecutor.DefaultCallOutRetries,
            scope.SecretNonce);
        var callOut = run.AddOwnSignal(SignalMessage.CallOutSignal, run.Now.UnixMs, JsonSerializer.Serialize(request, EngineJson.Options));
        run.Append(HistoryEventTypes.CallOutStarted, Id, new { request.Method, Url = CallOutRequest.RedactUrl(request.Url) });
        return ThreadResult.Waits(new WaitPoint(WaitKind.CallOut, Id) { CallOutId = callOut });
    }
}
